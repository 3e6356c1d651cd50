//! The web console in a real browser (Debian's chromium, driven through chromedriver over
//! WebDriver): the group-communication paper's Fig 5 session end to end against three
//! `covey serve` members — create (after a refused member), profile, query with the default
//! operation, with avg and as anycast, live values of its members, delete — and a discovery
//! session in the explorer; and the same session with a MULTICAST entity, as the paper's GUI
//! creates, in network namespaces (root only). Screenshots of each step are kept under
//! target/console-screenshots/.

mod gateway_support;
mod netns;
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use gateway_support::{gateway_with_http, gateway_with_http_and, Scratch};
use netns::{is_root, ula, Lab};
use support::{covey_server, peer, run_limited, stderr, stdout};

/// Longest wait for anything to appear on the page.
const PAGE_WAIT: Duration = Duration::from_secs(30);

/// chromedriver on a port of its choosing, killed on drop.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    /// Starts chromedriver on port 0 and reads the port from its start-up line, `ChromeDriver
    /// was started successfully on port N.`
    fn start() -> Driver {
        let mut child = peer("chromedriver", "chromium-driver")
            .arg("--port=0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads to the end, so chromedriver never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.split_once("started successfully on port ") {
                    let _ = tx.send(rest.1.trim_end_matches('.').parse::<u16>());
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(15))
            .expect("chromedriver says its port")
            .expect("a port number");
        Driver { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn browser(driver: &Driver) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,1000"],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a chromium session")
}

fn shots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/console-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    dir
}

async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(shots().join(format!("{name}.png")), png).expect("save screenshot");
}

/// The text of `css` once `ready` holds for it (at most [`PAGE_WAIT`]).
async fn text_when(c: &Client, css: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + PAGE_WAIT;
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Ok(e) = c.find(Locator::Css(css)).await {
            last = e.text().await.unwrap_or_default();
            if ready(&last) {
                return last;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{css} never became ready; last text {last:?}");
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .expect(css)
        .click()
        .await
        .expect(css);
}

async fn fill(c: &Client, css: &str, text: &str) {
    let e = c.find(Locator::Css(css)).await.expect(css);
    e.clear().await.expect(css);
    e.send_keys(text).await.expect(css);
}

/// The `aria-invalid` mark of the create form's `field`.
async fn invalid(c: &Client, field: &str) -> Option<String> {
    c.find(Locator::Css(&format!("#create-form [name={field}]")))
        .await
        .expect(field)
        .attr("aria-invalid")
        .await
        .expect(field)
}

async fn select(c: &Client, css: &str, label: &str) {
    let e = c.find(Locator::Css(css)).await.expect(css);
    e.select_by_label(label).await.expect(css);
}

/// The numbers in the value column of the per-member table.
async fn member_values(c: &Client) -> Vec<f64> {
    let mut values = Vec::new();
    for row in c
        .find_all(Locator::Css("#member-table tbody tr"))
        .await
        .unwrap()
    {
        let cells = row.find_all(Locator::Css("td")).await.unwrap();
        let text = cells[2].text().await.unwrap();
        values.push(
            text.parse::<f64>()
                .unwrap_or_else(|_| panic!("a number: {text}")),
        );
    }
    values
}

/// The profile view's JSON document once it has `key` (at most [`PAGE_WAIT`]).
async fn profile_with(c: &Client, key: &str) -> serde_json::Value {
    let needle = format!("\"{key}\"");
    let deadline = Instant::now() + PAGE_WAIT;
    let profile = loop {
        let v = c
            .find(Locator::Css("#profile-text"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default();
        if v.contains(&needle) || Instant::now() > deadline {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    serde_json::from_str(&profile).expect("the profile as JSON")
}

/// Runs the query with the profile's operation (lst): all three members answer.
async fn query_default_gets_every_member(c: &Client) {
    click(c, "#query-run").await;
    text_when(c, "#query-answered", |t| t.starts_with("3 of 3")).await;
    assert_eq!(text_when(c, "#query-op", |t| !t.is_empty()).await, "lst");
    assert_eq!(member_values(c).await.len(), 3);
}

/// Runs the query with avg: the combined value is the mean of the member values shown.
async fn query_avg_is_the_members_mean(c: &Client) {
    select(c, "#query-form [name=eo]", "avg").await;
    click(c, "#query-run").await;
    text_when(c, "#query-op", |t| t == "avg").await;
    let value: f64 = text_when(c, "#query-value", |t| t.parse::<f64>().is_ok())
        .await
        .parse()
        .unwrap();
    let values = member_values(c).await;
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    assert!(
        (value - mean).abs() < 1e-6 * (1.0 + mean.abs()),
        "{value} vs {values:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs chromium and chromium-driver"]
async fn the_papers_gui_session_runs_in_chromium() {
    let scratch = Scratch::new("console-browser");
    let (_gateway, base) = gateway_with_http(&scratch.join("e.db"));
    let members: Vec<_> = (0..3).map(|_| covey_server(&[])).collect();
    let uris: Vec<String> = members
        .iter()
        .map(|(_, p)| format!("coap://127.0.0.1:{p}/sensors/temp"))
        .collect();
    let driver = Driver::start();
    let c = browser(&driver).await;
    c.goto(&base).await.unwrap();
    text_when(&c, "#em-uri", |t| t.contains("coap://")).await;

    // A member that does not exist: the EM's diagnostic shows beside the members field.
    fill(&c, "#create-form [name=name]", "temps").await;
    let bad = format!("{}\ncoap://127.0.0.1:{}/nothere", uris[0], members[0].1);
    fill(&c, "#create-form [name=er]", &bad).await;
    click(&c, "#create").await;
    let error = text_when(&c, "#err-er", |t| !t.is_empty()).await;
    assert!(
        error.contains("4.00") && error.contains("/nothere") && !error.contains("\"reason\""),
        "the report's text beside the field it names: {error}"
    );
    assert_eq!(invalid(&c, "er").await, Some("true".into()));
    screenshot(&c, "01-create-refused").await;

    // Too many replies for one member: the report names enr, whose line shows it.
    fill(&c, "#create-form [name=er]", &uris[0]).await;
    fill(&c, "#create-form [name=enr]", "3").await;
    click(&c, "#create").await;
    let error = text_when(&c, "#err-enr", |t| !t.is_empty()).await;
    assert!(
        error.contains("3 replies cannot come from 1 member"),
        "{error}"
    );
    assert_eq!(invalid(&c, "enr").await, Some("true".into()));
    assert_eq!(
        invalid(&c, "er").await,
        None,
        "marks of the last try are gone"
    );
    let er_line = c.find(Locator::Css("#err-er")).await.unwrap();
    assert_eq!(er_line.text().await.unwrap(), "");
    fill(&c, "#create-form [name=enr]", "").await;

    // Create: three members, operations lst and avg.
    fill(&c, "#create-form [name=er]", &uris.join("\n")).await;
    fill(&c, "#create-form [name=eo]", "lst, avg").await;
    fill(&c, "#create-form [name=delay]", "auto").await;
    click(&c, "#create").await;
    text_when(&c, "#entity-result", |t| t.contains("created")).await;
    let row = text_when(&c, "tr[data-entity=temps]", |t| t.contains("unicast 3")).await;
    assert!(row.starts_with("temps"), "{row}");
    screenshot(&c, "02-created").await;

    // Profile.
    click(&c, "tr[data-entity=temps] button.profile").await;
    let doc = profile_with(&c, "er").await;
    assert_eq!(doc["er"], serde_json::json!(uris));
    assert_eq!(doc["eo"], serde_json::json!(["lst", "avg"]));
    assert_eq!(doc["delay"], "auto");
    screenshot(&c, "03-profile").await;

    // Query with the default operation: every member's value in the table.
    click(&c, "tr[data-entity=temps] button.query").await;
    query_default_gets_every_member(&c).await;
    screenshot(&c, "04-query-default").await;

    // avg: the combined value is the mean of the members' values shown.
    query_avg_is_the_members_mean(&c).await;
    screenshot(&c, "05-query-avg").await;

    // Anycast: the first reply wins.
    click(&c, "#query-anycast").await;
    text_when(&c, "#query-answered", |t| t.starts_with("1 of 3")).await;
    screenshot(&c, "06-query-anycast").await;

    // ?fanout only after the confirmation: dismissed, nothing is sent; accepted, every
    // member's answer comes back.
    click(&c, "#fanout-run").await;
    c.dismiss_alert().await.expect("a confirmation dialog");
    let hidden = c
        .find(Locator::Css("#fanout-result"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap();
    assert!(!hidden, "a dismissed fan-out shows no result");
    click(&c, "#fanout-run").await;
    c.accept_alert().await.expect("a confirmation dialog");
    let fanout = text_when(&c, "#fanout-result", |t| t.contains("\"fanout\"")).await;
    for uri in &uris {
        assert!(fanout.contains(uri.as_str()), "{fanout}");
    }

    // Live: observe every member of the entity, one line per member with its latest value.
    click(&c, "nav [data-tab=live]").await;
    fill(&c, "#live-target", "temps").await;
    click(&c, "#live-start").await;
    let legend = text_when(&c, "#live-legend", |t| {
        t.lines().count() == 3
            && t.lines().all(|l| {
                l.rsplit_once(": ")
                    .is_some_and(|(_, v)| v.trim().parse::<f64>().is_ok())
            })
    })
    .await;
    for uri in &uris {
        assert!(legend.contains(uri.as_str()), "{legend}");
    }
    screenshot(&c, "07-live").await;
    click(&c, "#live-stop").await;

    // Discovery on a member, then a request; CBOR shown in diagnostic notation.
    click(&c, "nav [data-tab=explore]").await;
    fill(
        &c,
        "#explore-host",
        &format!("coap://127.0.0.1:{}", members[1].1),
    )
    .await;
    click(&c, "#discover").await;
    text_when(&c, "#resource-list", |t| t.contains("/sensors/temp")).await;
    let buttons = c
        .find_all(Locator::Css("#resource-list button"))
        .await
        .unwrap();
    let mut found = false;
    for b in buttons {
        if b.text().await.unwrap() == "/sensors/temp" {
            b.click().await.unwrap();
            found = true;
        }
    }
    assert!(found, "/sensors/temp listed");
    click(&c, "#request-send").await;
    let body = text_when(&c, "#response-body", |t| t.trim().parse::<f64>().is_ok()).await;
    assert!(body.trim().parse::<f64>().is_ok());
    screenshot(&c, "08-explore-get").await;
    let em = text_when(&c, "#em-uri", |t| t.contains("coap://")).await;
    let em = em.split_whitespace().last().unwrap().to_string();
    fill(&c, "#request-uri", &format!("{em}/e/temps")).await;
    select(&c, "#request-accept", "senml+cbor").await;
    click(&c, "#request-send").await;
    let diag = text_when(&c, "#response-body", |t| t.contains("bn")).await;
    assert!(diag.starts_with('['), "diagnostic notation: {diag}");
    assert!(text_when(&c, "#response-type", |t| !t.is_empty()).await == "application/senml+cbor");
    screenshot(&c, "09-explore-cbor").await;

    // Delete, confirmed in the browser's dialog; each member's result is shown.
    click(&c, "nav [data-tab=entities]").await;
    click(&c, "tr[data-entity=temps] button.delete").await;
    c.accept_alert().await.expect("a confirmation dialog");
    let result = text_when(&c, "#entity-result", |t| t.starts_with("2.02")).await;
    assert!(result.contains("temps"), "{result}");
    text_when(&c, "#entities-empty", |t| t.contains("No entities")).await;
    screenshot(&c, "10-deleted").await;

    c.close().await.unwrap();
}

/// Set in the run of this test binary that `the_papers_multicast_session_runs_in_chromium`
/// starts inside the gateway's namespace: the members' URIs, comma-separated.
const MULTICAST_MEMBERS: &str = "COVEY_TEST_MULTICAST_MEMBERS";

/// Hosts of the multicast session: the gateway (with the browser), then three members.
const MC_GATEWAY: usize = 1;
const MC_MEMBERS: [usize; 3] = [2, 3, 4];
const MC_SUBNET: u16 = 0x5b;

#[test]
#[ignore = "needs root, chromium and chromium-driver"]
fn the_papers_multicast_session_runs_in_chromium() {
    if let Ok(members) = std::env::var(MULTICAST_MEMBERS) {
        let uris: Vec<String> = members.split(',').map(str::to_string).collect();
        return tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(multicast_session(uris));
    }
    assert!(
        is_root(),
        "the multicast session needs root to create network namespaces (CAP_NET_ADMIN); \
         IPv6 multicast does not loop back over lo, so the members live on a bridge"
    );
    // Hosts on a bridge, each in its own namespace: members joined to a group answer from
    // their own addresses, which the Entity Manager matches (on one host's lo they could not
    // be told apart, and lo does not deliver IPv6 multicast to its own sockets).
    let prefix = format!("covey-console-{}", std::process::id());
    let mut lab = Lab::new(&prefix, Duration::from_secs(20));
    lab.build_ipv6(MC_MEMBERS.len() + 1, MC_SUBNET);
    // The EM on another host moves the members into the entity's group through /mc, as in
    // the paper, which had no security: open it to the LAN.
    for n in MC_MEMBERS {
        lab.start(
            n,
            &["serve", "--bind", "[::]:5683", "--mc", "--open-management"],
        );
    }
    for n in MC_MEMBERS {
        lab.wait_until_serving(n, ula(MC_SUBNET, n), MC_GATEWAY);
    }
    let uris: Vec<String> = MC_MEMBERS
        .iter()
        .map(|n| format!("coap://[{}]/sensors/temp", ula(MC_SUBNET, *n)))
        .collect();
    // This test again, inside the gateway's namespace, where the gateway, chromedriver and
    // chromium run and reach the members.
    let mut inner = std::process::Command::new("ip");
    inner
        .args(["netns", "exec", &lab.host(MC_GATEWAY)])
        .arg(std::env::current_exe().expect("the test binary"))
        .args([
            "the_papers_multicast_session_runs_in_chromium",
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MULTICAST_MEMBERS, uris.join(","));
    let out = run_limited(inner, Duration::from_secs(240));
    assert!(
        out.status.success() && stdout(&out).contains("1 passed"),
        "the session in the gateway's namespace failed:\n{}\n{}\n{}",
        stdout(&out),
        stderr(&out),
        lab.logs()
    );
}

/// Fig 5 with a multicast entity: create (a group assigned, every member joined), profile,
/// query with the default operation, avg and anycast, delete (every member left).
async fn multicast_session(uris: Vec<String>) {
    let scratch = Scratch::new("console-browser-multicast");
    // A second socket on IPv6 for the group and the members; the console talks to the EM
    // on 127.0.0.1.
    let (_gateway, base) = gateway_with_http_and(
        &scratch.join("e.db"),
        &["--bind", "[::]:5683", "--validation-timeout", "5"],
    );
    let driver = Driver::start();
    let c = browser(&driver).await;
    c.goto(&base).await.unwrap();
    text_when(&c, "#em-uri", |t| t.contains("coap://")).await;

    fill(&c, "#create-form [name=name]", "cold").await;
    fill(&c, "#create-form [name=er]", &uris.join("\n")).await;
    select(&c, "#create-form [name=ect]", "multicast").await;
    fill(&c, "#create-form [name=eo]", "lst, avg").await;
    click(&c, "#create").await;
    text_when(&c, "#entity-result", |t| t.contains("created")).await;
    let row = text_when(&c, "tr[data-entity=cold]", |t| t.contains("multicast 3")).await;
    assert!(row.starts_with("cold"), "{row}");
    screenshot(&c, "mc-01-created").await;

    click(&c, "tr[data-entity=cold] button.profile").await;
    let doc = profile_with(&c, "mcastURI").await;
    assert_eq!(doc["ect"], "multicast", "{doc}");
    assert_eq!(doc["er"], serde_json::json!(uris));
    let group = doc["mcastURI"].as_str().expect("a group URI");
    assert!(group.starts_with("coap://[ff1e::89:"), "{group}");
    screenshot(&c, "mc-02-profile").await;

    // One multicast request; every member's answer in the table.
    click(&c, "tr[data-entity=cold] button.query").await;
    query_default_gets_every_member(&c).await;
    screenshot(&c, "mc-03-query-default").await;

    query_avg_is_the_members_mean(&c).await;
    screenshot(&c, "mc-04-query-avg").await;

    click(&c, "#query-anycast").await;
    text_when(&c, "#query-answered", |t| t.starts_with("1 of 3")).await;
    screenshot(&c, "mc-05-query-anycast").await;

    click(&c, "nav [data-tab=entities]").await;
    click(&c, "tr[data-entity=cold] button.delete").await;
    c.accept_alert().await.expect("a confirmation dialog");
    let result = text_when(&c, "#entity-result", |t| t.starts_with("2.02")).await;
    assert!(result.contains("cold"), "{result}");
    text_when(&c, "#entities-empty", |t| t.contains("No entities")).await;
    screenshot(&c, "mc-06-deleted").await;

    c.close().await.unwrap();
}
