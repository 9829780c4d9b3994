//! `cvo upgrade` requests against `cvo sim serve` (the real binary, a child process), counted
//! in the server's audit log: a request that passes its preconditions is exactly one PATCH of
//! clusterversions/version that changes `spec.desiredUpdate` (or `spec.channel`) and nothing
//! else; a refused request (Failing=True, Upgradeable=False for a minor update, a
//! not-recommended target, `--read-only`) makes no write, exits 1 and names the reason and the
//! flag that would waive it.

#[path = "common/cluster.rs"]
mod cluster;
mod common;

use std::{
    path::PathBuf,
    process::{Child, Stdio},
    time::Duration,
};

use serde_json::Value;

/// A running `cvo sim serve` seeded with one ClusterVersion; killed on drop.
struct Server {
    child: Child,
    kubeconfig: PathBuf,
    audit: PathBuf,
    dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade/cv-4.16.3.yaml")
}

impl Server {
    /// Starts a server holding the fixture ClusterVersion after `edit` (YAML text in, out).
    fn start(edit: impl FnOnce(String) -> String) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let cv = dir.path().join("cv.yaml");
        let text = std::fs::read_to_string(fixture()).expect("fixture");
        std::fs::write(&cv, edit(text)).expect("write cv");
        let kubeconfig = dir.path().join("kubeconfig");
        let audit = dir.path().join("audit.jsonl");
        let (child, _) = common::spawn_sim_serve(
            &kubeconfig,
            &[
                "--audit-log".as_ref(),
                audit.as_os_str(),
                "--from".as_ref(),
                cv.as_os_str(),
            ],
            Stdio::null(),
            Duration::from_secs(20),
        );
        Server {
            child,
            kubeconfig,
            audit,
            dir,
        }
    }

    /// Runs `cvo upgrade ARGS --kubeconfig K`: (exit code, stdout, stderr).
    fn upgrade(&self, args: &[&str]) -> (i32, String, String) {
        let kubeconfig = self.kubeconfig.to_str().expect("UTF-8 temp path");
        let mut all = vec!["upgrade"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--kubeconfig", kubeconfig]);
        without_update_service(&all)
    }

    /// The audit log's write requests (every verb but get, list and watch; no GET, also of a
    /// kind the server does not serve) as (method, path).
    fn writes(&self) -> Vec<(String, String)> {
        let log = std::fs::read_to_string(&self.audit).unwrap_or_default();
        log.lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("audit line is JSON"))
            .filter(|e| !matches!(e["verb"].as_str(), Some("get" | "list" | "watch")) && e["method"] != "GET")
            .map(|e| {
                (
                    e["method"].as_str().unwrap_or_default().to_string(),
                    e["path"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// The ClusterVersion as the server holds it, as JSON.
    fn cluster_version(&self) -> Value {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let conn = cvo::cluster::live::connect(Some(&self.kubeconfig), None)
                .await
                .expect("connect");
            let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
                conn.client,
                &kube::api::ApiResource {
                    group: "config.openshift.io".into(),
                    version: "v1".into(),
                    api_version: "config.openshift.io/v1".into(),
                    kind: "ClusterVersion".into(),
                    plural: "clusterversions".into(),
                },
            );
            serde_json::to_value(api.get("version").await.expect("get cv")).expect("json")
        })
    }
}

const PATCH_CV: (&str, &str) = ("PATCH", "/apis/config.openshift.io/v1/clusterversions/version");

/// A proxy nothing listens on, as `HTTPS_PROXY`: the cluster's API and routes are on loopback
/// (never proxied), while the update service `cvo upgrade` asks on a live cluster
/// (`cli::upgrade::explain`) cannot be reached, so the output is oc's whether or not this
/// machine reaches the Internet. `tests/upgrade_explained.rs` tests what is added.
const NO_UPDATE_SERVICE: &str = "http://127.0.0.1:9";

/// `cvo ARGS` as [`common::cvo_offline`] runs it, with [`NO_UPDATE_SERVICE`].
fn without_update_service(args: &[&str]) -> (i32, String, String) {
    let out = common::cvo()
        .args(args)
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "off")
        .env("HTTPS_PROXY", NO_UPDATE_SERVICE)
        .output()
        .expect("cvo runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn owned(w: (&str, &str)) -> (String, String) {
    (w.0.to_string(), w.1.to_string())
}

#[test]
fn to_a_recommended_version_is_exactly_one_patch_of_desired_update() {
    let server = Server::start(|t| t);
    let _ = &server.dir;
    let before = server.cluster_version();
    let (code, out, err) = server.upgrade(&["--to", "4.16.4"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Requested update to 4.16.4\n");
    assert_eq!(server.writes(), vec![owned(PATCH_CV)]);
    let after = server.cluster_version();
    assert_eq!(
        after["spec"]["desiredUpdate"],
        serde_json::json!({
            "version": "4.16.4",
            "image": "quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444"
        })
    );
    // Nothing else of the spec moved, and the status is untouched.
    let mut spec = after["spec"].clone();
    spec.as_object_mut().expect("spec object").remove("desiredUpdate");
    assert_eq!(spec, before["spec"]);
    assert_eq!(after["status"], before["status"]);
    // The version the cluster runs is no change at all: no write.
    let (code, out, _) = server.upgrade(&["--to", "4.16.3"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "info: Cluster is already at version 4.16.3\n")
    );
    assert_eq!(server.writes().len(), 1);
}

#[test]
fn a_failing_cluster_is_refused_with_no_write_until_allow_upgrade_with_warnings() {
    let server = Server::start(|t| {
        t.replace(
            "{type: Failing, status: \"False\", lastTransitionTime: \"2026-01-01T01:00:00Z\"}",
            "{type: Failing, status: \"True\", lastTransitionTime: \"2026-01-01T01:00:00Z\", reason: ClusterOperatorDegraded, message: Cluster operator etcd is degraded}",
        )
    });
    let (code, out, err) = server.upgrade(&["--to", "4.16.4"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "");
    assert!(err.contains("the cluster is experiencing an error reconciling \"4.16.3\":\n\n  Reason: ClusterOperatorDegraded\n  Message: Cluster operator etcd is degraded"), "{err}");
    assert!(
        err.contains("If you want to upgrade anyway, use --allow-upgrade-with-warnings."),
        "{err}"
    );
    assert_eq!(server.writes(), Vec::<(String, String)>::new());
    let (code, out, err) = server.upgrade(&["--to", "4.16.4", "--allow-upgrade-with-warnings"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Requested update to 4.16.4\n");
    assert!(
        err.contains(
            "warning: --allow-upgrade-with-warnings is bypassing: the cluster is experiencing an error"
        ),
        "{err}"
    );
    assert_eq!(server.writes(), vec![owned(PATCH_CV)]);
}

#[test]
fn upgradeable_false_refuses_a_minor_update_but_not_a_patch_update() {
    let server = Server::start(|t| {
        t.replace(
            "  - {type: RetrievedUpdates,",
            "  - {type: Upgradeable, status: \"False\", lastTransitionTime: \"2026-01-01T01:00:00Z\", reason: AdminAckRequired, message: Kubernetes 1.30 removes APIs}\n  - {type: RetrievedUpdates,",
        )
    });
    let (code, _, err) = server.upgrade(&["--to", "4.17.1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Precondition \"ClusterVersionUpgradeable\" failed because of \"AdminAckRequired\": Kubernetes 1.30 removes APIs"), "{err}");
    assert!(err.contains("use --force"), "{err}");
    assert!(server.writes().is_empty(), "{:?}", server.writes());
    let (code, out, err) = server.upgrade(&["--to", "4.17.1", "--force"]);
    assert_eq!((code, out.as_str()), (0, "Requested update to 4.17.1\n"), "{err}");
    assert_eq!(
        server.cluster_version()["spec"]["desiredUpdate"]["force"],
        Value::Bool(true)
    );
    let (code, out, err) = server.upgrade(&["--to", "4.16.4"]);
    assert_eq!((code, out.as_str()), (0, "Requested update to 4.16.4\n"), "{err}");
    // The second request drops force: it was not asked for.
    assert_eq!(
        server.cluster_version()["spec"]["desiredUpdate"].get("force"),
        None
    );
    assert_eq!(server.writes(), vec![owned(PATCH_CV), owned(PATCH_CV)]);
}

/// The fixture with an unmanaged override and Upgradeable=False.
fn with_overrides(fixture: String) -> String {
    fixture
        .replace(
            "  channel: stable-4.16\n",
            "  channel: stable-4.16\n  overrides:\n  - {kind: Deployment, group: apps, namespace: openshift-monitoring, name: prometheus, unmanaged: true}\n",
        )
        .replace(
            "  - {type: RetrievedUpdates,",
            "  - {type: Upgradeable, status: \"False\", lastTransitionTime: \"2026-01-01T01:00:00Z\", reason: ClusterVersionOverrides, message: overrides set}\n  - {type: RetrievedUpdates,",
        )
}

/// What `cvo upgrade --to 4.16.4` prints on stderr for [`with_overrides`]'s cluster.
const OVERRIDES_WARNING: &str = "warning: Precondition \"ClusterVersionUpgradeable\" failed because of \"ClusterVersionOverridesSet\": Retarget from 4.16.3 to 4.16.4 is not blocked by ClusterVersionOverridesSet. But the cluster-version operator is not managing these resources; they are currently the responsibility of the agent that set the overrides: Disabling ownership via cluster version overrides prevents upgrades between minor or major versions. Please remove overrides before requesting a minor or major version update.\n";

/// Upstream `pkg/payload/precondition/clusterversion/upgradeable.go`: with Upgradeable=False
/// and an unmanaged override, a patch update is not blocked; the cluster will record
/// `ClusterVersionOverridesSet` as an accepted risk, and `cvo upgrade` says so first, in the
/// cluster's words, as a `warning:` line on stderr.
#[test]
fn a_non_blocking_precondition_is_printed_as_a_warning_and_the_request_is_sent() {
    let server = Server::start(with_overrides);
    let (code, out, err) = server.upgrade(&["--to", "4.16.4"]);
    assert_eq!((code, out.as_str()), (0, "Requested update to 4.16.4\n"), "{err}");
    assert_eq!(err, OVERRIDES_WARNING);
    assert_eq!(server.writes(), vec![owned(PATCH_CV)]);
    // A minor update is still refused by Upgradeable=False, with no write.
    let (code, _, err) = server.upgrade(&["--to", "4.17.1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Precondition \"ClusterVersionUpgradeable\" failed because of \"ClusterVersionOverrides\": overrides set"), "{err}");
    assert_eq!(server.writes().len(), 1);
}

/// The same request against the real kube-apiserver of `CVO_TEST_KUBECONFIG` (docs/testing.md;
/// nothing to do without it): the ClusterVersion `version` is created, its status written
/// through `/status`, and `cvo upgrade` prints the warning and writes the desired update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_blocking_precondition_is_printed_as_a_warning_on_the_real_server() {
    let Some(kubeconfig) = cluster::real_kubeconfig() else {
        return;
    };
    let t = cluster::TestCluster::new().await;
    let text = with_overrides(std::fs::read_to_string(fixture()).expect("fixture"));
    let mut cv: Value = serde_norway::from_str(&text).expect("fixture YAML");
    let status = cv["status"].take();
    t.delete(cluster::CV, "", "version").await;
    t.create(cluster::CV, cv).await;
    let mut stored = t.get(cluster::CV, "", "version").await.expect("created");
    stored["status"] = status;
    assert!(t.put_status(cluster::CV, stored).await, "status written");
    let path = kubeconfig.to_str().expect("UTF-8 kubeconfig path");
    let (code, out, err) = common::cvo_offline(&["upgrade", "--to", "4.16.4", "--kubeconfig", path]);
    let after = t.get(cluster::CV, "", "version").await.expect("still there");
    t.delete(cluster::CV, "", "version").await;
    assert_eq!((code, out.as_str()), (0, "Requested update to 4.16.4\n"), "{err}");
    assert_eq!(err, OVERRIDES_WARNING);
    assert_eq!(after["spec"]["desiredUpdate"]["version"], "4.16.4");
}

#[test]
fn a_not_recommended_target_needs_allow_not_recommended_which_prints_the_risk() {
    let server = Server::start(|t| t);
    let (code, _, err) = server.upgrade(&["--to", "4.16.5"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "To accept the Recommended=False risk and to proceed with update use --allow-not-recommended."
        ),
        "{err}"
    );
    assert!(server.writes().is_empty());
    let (code, out, err) = server.upgrade(&["--to", "4.16.5", "--allow-not-recommended"]);
    assert_eq!((code, out.as_str()), (0, "Requested update to 4.16.5\n"), "{err}");
    assert!(err.contains("warning: accepting risk BadThing: Bad things happen to clusters with a proxy. https://example.com/bad-thing\n"), "{err}");
    assert_eq!(server.writes(), vec![owned(PATCH_CV)]);
}

/// `--read-only` is a dry run: the verdict of each precondition and the patch on stdout, exit
/// 0, no write; a refused request prints its verdicts, then fails as it would.
#[test]
fn read_only_is_a_dry_run_and_from_files_are_read_only() {
    let server = Server::start(|t| t);
    let (code, out, err) = server.upgrade(&["--to", "4.16.4", "--read-only"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "Preconditions (--read-only: checked, nothing written):
  passed    Recommended: 4.16.4 is a recommended update
  passed    PullSpec: quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444 is a by-digest pull spec
  passed    Invalid: the ClusterVersion is valid
  passed    Failing: the cluster is not failing
  passed    UpdateInProgress: no update is in progress
  passed    ClusterVersionUpgradeable: Upgradeable is not False
  passed    ClusterVersionRollback: 4.16.4 is not lower than 4.16.3
  passed    ClusterVersionGiantHop: 4.16.3 to 4.16.4 is within one minor version
Would patch clusterversion/version (JSON merge patch):
  spec.desiredUpdate.image = \"quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444\"
  spec.desiredUpdate.version = \"4.16.4\"
Then: Requested update to 4.16.4
"
    );
    let (code, out, err) = server.upgrade(&["--to", "4.16.5", "--read-only"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("  blocking  Recommended (--allow-not-recommended would waive it): "),
        "{out}"
    );
    assert!(err.contains("--allow-not-recommended"), "{err}");
    let (code, out, err) = server.upgrade(&["channel", "fast-4.16", "--read-only"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.ends_with("  spec.channel = \"fast-4.16\"\n"), "{out}");
    assert!(server.writes().is_empty(), "{:?}", server.writes());
    let out = common::cvo()
        .args(["upgrade", "--to", "4.16.4", "--from"])
        .arg(fixture())
        .output()
        .expect("cvo runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--from is read-only"));
}

/// `--lang ru`: the dry run and a refusal worded in Russian (the precondition names, flags,
/// versions and the patch as they are); still no write. A Russian locale alone changes nothing
/// (the other tests' English).
#[test]
fn read_only_and_refusals_in_russian_with_lang_ru() {
    let server = Server::start(|t| t);
    let (code, out, err) = server.upgrade(&["--to", "4.16.4", "--read-only", "--lang", "ru"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "Предусловия (--read-only: проверены, ничего не записано):
  пройдено     Recommended: 4.16.4 — рекомендуемое обновление
  пройдено     PullSpec: quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444 — ссылка на образ по дайджесту
  пройдено     Invalid: ClusterVersion действителен
  пройдено     Failing: кластер без ошибок (Failing не True)
  пройдено     UpdateInProgress: обновление не выполняется
  пройдено     ClusterVersionUpgradeable: Upgradeable не False
  пройдено     ClusterVersionRollback: 4.16.4 не ниже 4.16.3
  пройдено     ClusterVersionGiantHop: переход с 4.16.3 на 4.16.4 — в пределах одной минорной версии
Был бы отправлен патч clusterversion/version (JSON merge patch):
  spec.desiredUpdate.image = \"quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444\"
  spec.desiredUpdate.version = \"4.16.4\"
Затем: Запрошено обновление до 4.16.4
"
    );
    let (code, out, err) = server.upgrade(&["--to", "4.16.5", "--lang", "ru"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.starts_with("cvo: обновление 4.16.5 не входит в рекомендуемые, но доступно как условное обновление. Чтобы принять риск Recommended=False и продолжить обновление, укажите --allow-not-recommended.\n  Причина: "),
        "{err}"
    );
    let (code, out, err) = server.upgrade(&["--to", "4.99.0", "--lang", "ru"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.starts_with("cvo: обновление не входит в возможные цели: "),
        "{err}"
    );
    assert!(server.writes().is_empty(), "{:?}", server.writes());
}

#[test]
fn unknown_versions_and_tags_are_refused_without_a_write() {
    let server = Server::start(|t| t);
    let (code, _, err) = server.upgrade(&["--to", "4.16.9"]);
    assert_eq!(code, 1);
    assert!(err.contains("the update is not one of the possible targets: 4.17.1, 4.16.4. specify --to-image to continue with the update."), "{err}");
    let (code, _, err) = server.upgrade(&[
        "--to-image",
        "quay.io/openshift-release-dev/ocp-release:4.16.4-x86_64",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--to-image must be a by-digest pull spec, unless --force is also set"),
        "{err}"
    );
    let (code, _, err) = server.upgrade(&[
        "--to-image",
        "example.com/mirror/release@sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("specify --allow-explicit-upgrade to continue with the update."),
        "{err}"
    );
    assert!(server.writes().is_empty(), "{:?}", server.writes());
}

/// A target taken from the update graph gets `--to-image`'s pull-spec check: a `file://`
/// image listed for 4.16.4 (`--to`) or 4.17.1 (`--to-latest`) is refused whatever the flags,
/// naming the image, and nothing is written.
#[test]
fn a_listed_file_image_is_refused_without_a_write() {
    let digest_4164 = "quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444";
    let digest_4171 = "quay.io/openshift-release-dev/ocp-release@sha256:1717171717171717171717171717171717171717171717171717171717171717";
    let server = Server::start(|t| {
        assert!(t.contains(digest_4164) && t.contains(digest_4171));
        t.replace(digest_4164, "file:///tmp/evil-payload")
            .replace(digest_4171, "https://evil.example.com/4.17.1.tar")
    });
    for (args, image, what) in [
        (vec!["--to", "4.16.4"], "file:///tmp/evil-payload", "file://"),
        (
            vec!["--to-latest"],
            "https://evil.example.com/4.17.1.tar",
            "https://",
        ),
        (
            vec!["--to", "4.16.4", "--force", "--allow-upgrade-with-warnings"],
            "file:///tmp/evil-payload",
            "file://",
        ),
    ] {
        let (code, out, err) = server.upgrade(&args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
        let version = if image.starts_with("file") {
            "4.16.4"
        } else {
            "4.17.1"
        };
        let want = format!(
            "the update service lists {version} with release image \"{image}\", which is a {what} location and not a registry pull spec; refusing it"
        );
        assert!(err.contains(&want), "{args:?}: {err}");
    }
    assert!(server.writes().is_empty(), "{:?}", server.writes());
    assert_eq!(server.cluster_version()["spec"].get("desiredUpdate"), None);
}

/// `cvo upgrade channel` as oc's, with its one habit changed: no argument shows the channel
/// (`--clear` clears it). A channel outside the release's channels, or clearing one inside
/// them, needs `--allow-explicit-channel`; refusals write nothing.
#[test]
fn channel_and_clear_are_single_patches() {
    let server = Server::start(|t| t);
    let (code, out, err) = server.upgrade(&["channel"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "Channel: stable-4.16 (available channels: fast-4.16, stable-4.16)\n"
        ),
        "{err}"
    );
    let (code, out, err) = server.upgrade(&["channel", "stable-4.17"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert_eq!(
        err,
        "cvo: the requested channel \"stable-4.17\" is not one of the available channels (fast-4.16, stable-4.16), you must pass --allow-explicit-channel to continue\n"
    );
    let (code, _, err) = server.upgrade(&["channel", "--clear"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("you must pass --allow-explicit-channel to continue"),
        "{err}"
    );
    let (code, _, err) = server.upgrade(&["channel", ""]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err, "cvo: an empty channel: to clear the channel, use --clear\n");
    assert!(server.writes().is_empty(), "{:?}", server.writes());
    let (code, out, err) = server.upgrade(&["channel", "stable-4.17", "--allow-explicit-channel"]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert_eq!(
        err,
        "warning: The requested channel \"stable-4.17\" is not one of the available channels (fast-4.16, stable-4.16). You have used --allow-explicit-channel to proceed anyway. Setting the update channel to \"stable-4.17\".\n"
    );
    assert_eq!(server.cluster_version()["spec"]["channel"], "stable-4.17");
    let (code, out, _) = server.upgrade(&["channel", "stable-4.17"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "info: Cluster is already in stable-4.17 (no change)\n")
    );
    // stable-4.17 is not one of the release's channels: clearing it needs no flag.
    let (code, out, err) = server.upgrade(&["channel", "--clear"]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("warning: Clearing channel \"stable-4.17\""), "{err}");
    assert_eq!(server.cluster_version()["spec"].get("channel"), None);
    let (code, out, _) = server.upgrade(&["channel"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "Channel is unset (available channels: fast-4.16, stable-4.16)\n"
        )
    );
    let (code, out, _) = server.upgrade(&["--clear"]);
    assert_eq!((code, out.as_str()), (0, "info: No update in progress\n"));
    let (code, _, err) = server.upgrade(&["--to-latest"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        server.cluster_version()["spec"]["desiredUpdate"]["version"],
        "4.17.1"
    );
    let (code, out, _) = server.upgrade(&["--clear"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "Cancelled requested upgrade to 4.17.1\n")
    );
    assert_eq!(server.cluster_version()["spec"].get("desiredUpdate"), None);
    assert_eq!(server.writes(), vec![owned(PATCH_CV); 4]);
}

/// `--to-multi-arch`: one patch of the current version with `architecture: Multi`; asked again,
/// no change; it goes with no other target flag.
#[test]
fn to_multi_arch_requests_the_current_version_as_multi() {
    let server = Server::start(|t| t);
    let (code, out, err) = server.upgrade(&["--to-multi-arch"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "Requested update to multi cluster architecture\n"),
        "{err}"
    );
    assert_eq!(
        server.cluster_version()["spec"]["desiredUpdate"],
        serde_json::json!({"architecture": "Multi", "version": "4.16.3"})
    );
    let (code, out, _) = server.upgrade(&["--to-multi-arch"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "info: Update to multi cluster architecture has already been requested\n"
        )
    );
    let (code, _, err) = server.upgrade(&["--to-multi-arch", "--to", "4.16.4"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "cvo: --to-multi-arch may not be used with --to, --to-image, or --to-latest\n"
    );
    assert_eq!(server.writes(), vec![owned(PATCH_CV)]);
}

#[test]
fn status_view_and_recommend_read_from_files_and_live() {
    let out = common::cvo()
        .args(["upgrade", "--from"])
        .arg(fixture())
        .env("RUST_LOG", "off")
        .output()
        .expect("cvo runs");
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "Cluster version is 4.16.3\n\nUpstream is unset, so the cluster will use an appropriate default.\nChannel: stable-4.16 (available channels: fast-4.16, stable-4.16)\n\nRecommended updates:\n\n  VERSION     IMAGE\n  4.17.1      quay.io/openshift-release-dev/ocp-release@sha256:1717171717171717171717171717171717171717171717171717171717171717\n  4.16.4      quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444\n\nAdditional updates which are not recommended for your cluster configuration are available, to view those re-run the command with --include-not-recommended.\n"
    );
    // Live: the same ClusterVersion from the simulator, which serves no Route API: the alerts
    // cannot be read, which is reported as oc reports it.
    let server = Server::start(|t| t);
    let out = common::cvo()
        .args(["upgrade", "recommend", "--kubeconfig"])
        .arg(&server.kubeconfig)
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "off")
        .env("HTTPS_PROXY", NO_UPDATE_SERVICE)
        .output()
        .expect("cvo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout,
        "Failed to check for at least some preconditions: failed to get alerts from Thanos: the server could not find the requested resource\nUpstream update service is unset, so the cluster will use an appropriate default.\nChannel: stable-4.16 (available channels: fast-4.16, stable-4.16)\n\nUpdates to 4.17:\n  VERSION     ISSUES\n  4.17.1      no known issues relevant to this cluster\n\nUpdates to 4.16:\n\n  Version: 4.16.5\n  Image: quay.io/openshift-release-dev/ocp-release@sha256:5555555555555555555555555555555555555555555555555555555555555555\n  Reason: BadThing\n  Message: Bad things happen to clusters with a proxy. https://example.com/bad-thing\n\n  VERSION     ISSUES\n  4.16.4      no known issues relevant to this cluster\n"
    );
    let out = common::cvo()
        .args([
            "upgrade",
            "recommend",
            "--version",
            "4.16.5",
            "--accept",
            "FailedToCompletePrecheck",
            "--kubeconfig",
        ])
        .arg(&server.kubeconfig)
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "off")
        .env("HTTPS_PROXY", NO_UPDATE_SERVICE)
        .output()
        .expect("cvo runs");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cvo: issues that apply to this cluster but which were not included in --accept: ConditionalUpdateRisk\n"
    );
    assert!(server.writes().is_empty(), "{:?}", server.writes());
}

/// A loopback registry stub: `HEAD`/`GET /v2/<repo>/manifests/<tag>` answers the digest of the
/// tags in `tags` (`Docker-Content-Digest`), 404 `MANIFEST_UNKNOWN` for any other; `/v2/` 200.
/// Returns `127.0.0.1:PORT`; the thread serves until the test process ends.
fn registry_stub(tags: &'static [(&'static str, &'static str)]) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            loop {
                let mut first = String::new();
                if reader.read_line(&mut first).unwrap_or(0) == 0 {
                    break;
                }
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 2 {
                    line.clear();
                }
                let mut parts = first.split_whitespace();
                let method = parts.next().unwrap_or_default().to_string();
                let path = parts.next().unwrap_or_default().to_string();
                let found = tags
                    .iter()
                    .find(|(tag, _)| path.ends_with(&format!("/manifests/{tag}")));
                let (status, headers, body) = match found {
                    Some((_, digest)) => (
                        "200 OK",
                        format!(
                            "Docker-Content-Digest: {digest}\r\nContent-Type: application/vnd.oci.image.index.v1+json\r\n"
                        ),
                        String::new(),
                    ),
                    None if path.contains("/manifests/") => (
                        "404 Not Found",
                        "Content-Type: application/json\r\n".to_string(),
                        r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#
                            .to_string(),
                    ),
                    None => (
                        "200 OK",
                        "Content-Type: application/json\r\n".to_string(),
                        "{}".to_string(),
                    ),
                };
                let body = if method == "HEAD" { String::new() } else { body };
                let resp = format!(
                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                if stream.write_all(resp.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    addr
}

/// `--to-image` with a tag and `--force` (oc: a tag only with `--force`): the tag is resolved
/// once through the registry and the digest is what is written, in exactly one PATCH; a tag
/// the registry does not know is refused with no write.
#[test]
fn a_forced_by_tag_image_is_resolved_once_and_the_digest_is_written() {
    const D4: &str = "sha256:4444444444444444444444444444444444444444444444444444444444444444";
    let registry = registry_stub(&[("4.16.4", D4)]);
    let server = Server::start(|t| t);
    let unknown = format!("{registry}/ocp-release:4.99.0");
    let (code, _, err) = server.upgrade(&["--to-image", &unknown, "--force"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("--to-image {unknown}: resolving the tag to a digest:")),
        "{err}"
    );
    assert!(server.writes().is_empty(), "{:?}", server.writes());

    let tagged = format!("{registry}/ocp-release:4.16.4");
    let (code, out, err) = server.upgrade(&["--to-image", &tagged, "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    let by_digest = format!("{registry}/ocp-release@{D4}");
    assert!(
        err.contains("warning: Using by-tag pull specs is dangerous"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "info: {tagged} resolves to {by_digest}; requesting the digest"
        )),
        "{err}"
    );
    assert_eq!(server.writes(), vec![owned(PATCH_CV)]);
    let cv = server.cluster_version();
    let du = &cv["spec"]["desiredUpdate"];
    assert_eq!(du["image"], by_digest.as_str(), "{du}");
    assert_eq!(du["force"], true, "{du}");
    assert_eq!(du["version"], "4.16.4", "{du}");
}

impl Server {
    /// Creates the demo cluster's FeatureGate `cluster` (ClusterUpdateAcceptRisks enabled for
    /// 4.16.3), its status written through `/status`.
    fn enable_accept_risks(&self) {
        let text = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo-cluster/featuregate.yaml"),
        )
        .expect("featuregate fixture");
        let mut fg: Value = serde_norway::from_str(&text).expect("featuregate YAML");
        let status = fg["status"].take();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let conn = cvo::cluster::live::connect(Some(&self.kubeconfig), None)
                .await
                .expect("connect");
            let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
                conn.client,
                &kube::api::ApiResource {
                    group: "config.openshift.io".into(),
                    version: "v1".into(),
                    api_version: "config.openshift.io/v1".into(),
                    kind: "FeatureGate".into(),
                    plural: "featuregates".into(),
                },
            );
            let obj: kube::api::DynamicObject = serde_json::from_value(fg).expect("object");
            api.create(&Default::default(), &obj).await.expect("create");
            api.patch_status(
                "cluster",
                &Default::default(),
                &kube::api::Patch::Merge(serde_json::json!({ "status": status })),
            )
            .await
            .expect("status");
        });
    }
}

/// `cvo upgrade accept RISK,RISK-` edits `spec.desiredUpdate.acceptRisks` as `oc adm upgrade
/// accept` does (add, `-` removes, `--replace`, `--clear`), one patch per change, none when
/// nothing changes; without the cluster's feature gate it is refused with no write.
#[test]
fn accept_adds_removes_replaces_and_clears_risks() {
    let server = Server::start(|t| t);
    let (code, _, err) = server.upgrade(&["accept", "A"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with(
            "cvo: the FeatureGate \"cluster\" does not enable ClusterUpdateAcceptRisks for 4.16.3"
        ),
        "{err}"
    );
    assert!(server.writes().is_empty());
    server.enable_accept_risks();
    let accepted = |s: &Server| s.cluster_version()["spec"]["desiredUpdate"]["acceptRisks"].clone();
    for (args, out, want) in [
        (
            vec!["accept", "B,A"],
            "info: Accept risks are [A, B]\n",
            serde_json::json!([{"name": "A"}, {"name": "B"}]),
        ),
        (
            vec!["accept", "C,A-"],
            "info: Accept risks are [B, C]\n",
            serde_json::json!([{"name": "B"}, {"name": "C"}]),
        ),
        (
            vec!["accept", "C"],
            "info: Accept risks are not changed\n",
            serde_json::json!([{"name": "B"}, {"name": "C"}]),
        ),
        (
            vec!["accept", "--replace", "X"],
            "info: Accept risks are [X]\n",
            serde_json::json!([{"name": "X"}]),
        ),
        (
            vec!["accept", "--clear"],
            "info: Accept risks are []\n",
            Value::Null,
        ),
    ] {
        let (code, got, err) = server.upgrade(&args);
        assert_eq!((code, got.as_str()), (0, out), "{args:?}: {err}");
        assert_eq!(accepted(&server), want, "{args:?}");
    }
    let (code, _, err) = server.upgrade(&["accept", "A,A-"]);
    assert_eq!(
        (code, err.as_str()),
        (2, "cvo: requested risks with both Risk and Risk-: A\n")
    );
    let (code, _, err) = server.upgrade(&["accept"]);
    assert_eq!(code, 2, "{err}");
    // The FeatureGate's create and status are the test's; cvo made four patches.
    let patches = server
        .writes()
        .into_iter()
        .filter(|w| w.1.contains("clusterversions"))
        .count();
    assert_eq!(patches, 4);
}

/// `cvo upgrade recommend` on a live cluster reads the firing alerts where oc reads them (the
/// Route openshift-monitoring/thanos-querier, `GET /api/v1/alerts` with the user's token):
/// against `cvo sim serve --alerts`, the output is oc's example output byte for byte.
#[test]
fn recommend_reads_the_clusters_alerts_from_its_thanos_route() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oc-upgrade-recommend");
    let cv = examples.join("4.16.27-degraded-monitoring-cv.yaml");
    let alerts = examples.join("4.16.27-degraded-monitoring-alerts.json");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let (mut child, _) = common::spawn_sim_serve(
        &kubeconfig,
        &[
            "--from".as_ref(),
            cv.as_os_str(),
            "--alerts".as_ref(),
            alerts.as_os_str(),
        ],
        Stdio::null(),
        Duration::from_secs(20),
    );
    let kc = kubeconfig.to_str().expect("UTF-8 temp path");
    let (code, out, err) = without_update_service(&["upgrade", "recommend", "--kubeconfig", kc]);
    let want = std::fs::read_to_string(examples.join("4.16.27-degraded-monitoring.output")).expect("fixture");
    let (code2, _, err2) =
        without_update_service(&["upgrade", "recommend", "--version", "4.16.32", "--kubeconfig", kc]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!((code, out.as_str()), (0, want.as_str()), "{err}");
    assert_eq!(code2, 1);
    assert_eq!(
        err2,
        "cvo: issues that apply to this cluster but which were not included in --accept: ClusterOperatorDown,Failing,PodDisruptionBudgetAtLimit\n"
    );
}
