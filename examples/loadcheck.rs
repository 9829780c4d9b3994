fn main() {
    let paths: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    match cvo::cluster::snapshot::load(&paths) {
        Ok(s) => println!("cv={} co={} mcp={} mc={} nodes={} mco={}", s.cluster_version.is_some(), s.cluster_operators.len(), s.machine_config_pools.len(), s.machine_configs.len(), s.nodes.len(), s.mco_deployment.is_some()),
        Err(e) => println!("error: {e}"),
    }
}
