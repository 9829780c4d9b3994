//! Tiny proxies for the tests, on a random loopback port: HTTP (CONNECT tunnels and
//! absolute-form plain-HTTP requests, forwarded in origin form) and SOCKS5. Whatever host a client asks for, the proxy
//! connects to 127.0.0.1 on the port asked for (so a made-up name no resolver knows reaches a
//! local server only through the proxy), and records each target (`host:port`).

use std::sync::{Arc, Mutex};

use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{TcpListener, TcpStream},
};

/// What the proxy speaks.
#[derive(Clone, Copy, Debug)]
pub enum Protocol {
    /// HTTP: `CONNECT host:port` tunnels, and `GET http://host:port/...` forwarded as is.
    Connect,
    /// SOCKS5 without authentication (IPv4, IPv6 and domain-name targets).
    Socks5,
}

/// A running proxy; its thread serves until the test process ends.
pub struct Proxy {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    targets: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    /// Starts one on 127.0.0.1 (a random port).
    pub fn start(protocol: Protocol) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let targets = Arc::new(Mutex::new(Vec::new()));
        let t = targets.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("listener");
                while let Ok((conn, _)) = listener.accept().await {
                    let t = t.clone();
                    tokio::spawn(async move {
                        let _ = serve(conn, protocol, t).await;
                    });
                }
            });
        });
        Proxy { addr, targets }
    }

    /// `scheme://127.0.0.1:PORT`.
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}", self.addr)
    }

    /// The targets asked for so far, in order (`host:port`).
    pub fn targets(&self) -> Vec<String> {
        self.targets.lock().expect("lock").clone()
    }
}

/// Serves one client: the handshake of `protocol`, then bytes both ways.
async fn serve(
    mut conn: TcpStream,
    protocol: Protocol,
    targets: Arc<Mutex<Vec<String>>>,
) -> std::io::Result<()> {
    let mut forward = Vec::new();
    let (host, port) = match protocol {
        Protocol::Connect => {
            // The request head, byte by byte up to the blank line (a CONNECT client sends
            // nothing more before the answer; a plain request's head is forwarded).
            let mut head = Vec::new();
            while !head.ends_with(b"\r\n\r\n") && head.len() < 16384 {
                head.push(conn.read_u8().await?);
            }
            let text = String::from_utf8_lossy(&head).into_owned();
            let mut words = text.split_whitespace();
            let (method, target) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
            let authority = if method == "CONNECT" {
                target.to_owned()
            } else {
                // Forwarded in origin form (`GET /path HTTP/1.1`), as a proxy does.
                let rest = target.strip_prefix("http://").unwrap_or(target);
                let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                let path = if path.is_empty() { "/" } else { path };
                forward = text.replacen(target, path, 1).into_bytes();
                authority.to_owned()
            };
            let (host, port) = match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_owned(), p.parse::<u16>().unwrap_or(80)),
                None => (authority.clone(), 80),
            };
            (host, port)
        }
        Protocol::Socks5 => {
            let (ver, n) = (conn.read_u8().await?, conn.read_u8().await?);
            let mut methods = vec![0u8; usize::from(n)];
            conn.read_exact(&mut methods).await?;
            if ver != 5 || !methods.contains(&0) {
                return Ok(());
            }
            conn.write_all(&[5, 0]).await?;
            let mut req = [0u8; 4];
            conn.read_exact(&mut req).await?;
            let host = match req[3] {
                1 => {
                    let mut a = [0u8; 4];
                    conn.read_exact(&mut a).await?;
                    std::net::Ipv4Addr::from(a).to_string()
                }
                3 => {
                    let mut name = vec![0u8; usize::from(conn.read_u8().await?)];
                    conn.read_exact(&mut name).await?;
                    String::from_utf8_lossy(&name).into_owned()
                }
                _ => {
                    let mut a = [0u8; 16];
                    conn.read_exact(&mut a).await?;
                    std::net::Ipv6Addr::from(a).to_string()
                }
            };
            let port = conn.read_u16().await?;
            (host, port)
        }
    };
    targets.lock().expect("lock").push(format!("{host}:{port}"));
    let mut upstream = TcpStream::connect(("127.0.0.1", port)).await?;
    match protocol {
        Protocol::Connect if forward.is_empty() => {
            conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?
        }
        Protocol::Connect => upstream.write_all(&forward).await?,
        Protocol::Socks5 => conn.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?,
    }
    tokio::io::copy_bidirectional(&mut conn, &mut upstream).await?;
    Ok(())
}
