//! The web console in a real browser (Debian's chromium, driven through chromedriver over
//! WebDriver): the group-communication paper's Fig 5 session end to end against three
//! `covey serve` members — create (after a refused member), profile, query with the default
//! operation, with avg and as anycast, live values of its members, delete — and a discovery
//! session in the explorer; and the same session with a MULTICAST entity, as the paper's GUI
//! creates, in network namespaces (root only). Besides the paper's steps it checks what makes
//! the console pleasant to use: numbers at a readable precision with their unit, anycast
//! members not asked shown as not needed, results shown where the user looks, the live chart
//! (uPlot) with a time axis and a legend, panels side by side on a wide screen, and labels a
//! screen reader can use. Screenshots of each step are kept under target/console-screenshots/.

mod gateway_support;
mod netns;
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fantoccini::key::Key;
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

/// The DOM property `name` of the element `css` ("" when it has none).
async fn prop(c: &Client, css: &str, name: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .expect(css)
        .prop(name)
        .await
        .expect(css)
        .unwrap_or_default()
}

/// Whether the element `css` is displayed.
async fn displayed(c: &Client, css: &str) -> bool {
    c.find(Locator::Css(css))
        .await
        .expect(css)
        .is_displayed()
        .await
        .expect(css)
}

/// The value of `script` run in the page with `args`.
async fn js(c: &Client, script: &str, args: Vec<serde_json::Value>) -> serde_json::Value {
    c.execute(script, args).await.expect(script)
}

/// Whether the element `css` is shown whole in the viewport, below the sticky header.
async fn in_view(c: &Client, css: &str) -> bool {
    let seen = js(
        c,
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();
         const top = document.querySelector('header').getBoundingClientRect().bottom;
         return r.height > 0 && r.top >= top - 1 && r.bottom <= window.innerHeight + 1;",
        vec![css.into()],
    )
    .await;
    seen == serde_json::Value::Bool(true)
}

/// The bounding rectangle of `css`: left, top, right, bottom.
async fn rect(c: &Client, css: &str) -> [f64; 4] {
    let r = js(
        c,
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();
         return [r.left, r.top, r.right, r.bottom];",
        vec![css.into()],
    )
    .await;
    let n = |i: usize| r[i].as_f64().expect("a coordinate");
    [n(0), n(1), n(2), n(3)]
}

/// The texts of every element matching `css`.
async fn texts(c: &Client, css: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in c.find_all(Locator::Css(css)).await.unwrap() {
        out.push(e.text().await.unwrap());
    }
    out
}

/// The number in a value or reply-time cell, with its unit: `20.733 °C`, `0.42 ms`.
fn number_and_unit(text: &str) -> (f64, &str) {
    let (n, unit) = text.split_once(' ').unwrap_or((text, ""));
    let n = n
        .parse::<f64>()
        .unwrap_or_else(|_| panic!("a number: {text:?}"));
    (n, unit)
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
        let v = prop(c, "#profile-text", "value").await;
        if v.contains(&needle) || Instant::now() > deadline {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    serde_json::from_str(&profile).expect("the profile as JSON")
}

/// The row's Query button runs the query with the profile's operation (lst), no other click
/// needed: all three members answer, each with a reply time that is not 0, in view.
async fn row_query_gets_every_member(c: &Client, entity: &str) {
    click(c, &format!("tr[data-entity={entity}] button.query")).await;
    text_when(c, "#query-answered", |t| t.starts_with("3 of 3")).await;
    assert_eq!(text_when(c, "#query-op", |t| !t.is_empty()).await, "lst");
    assert_eq!(member_values(c).await.len(), 3);
    for time in texts(c, "#member-table tbody td:nth-child(4)").await {
        let (n, unit) = number_and_unit(&time);
        assert!(
            n > 0.0 && (unit == "ms" || unit == "s"),
            "a reply time in ms (s from a second on): {time:?}"
        );
    }
    assert!(in_view(c, "#query-result").await, "the answer is in view");
}

/// Runs the query with avg: the old answer goes at once, and the combined value is the mean
/// of the member values shown, to three decimals at most, with the members' unit.
async fn query_avg_is_the_members_mean(c: &Client) {
    select(c, "#query-form [name=eo]", "avg").await;
    let cleared = js(
        c,
        "document.querySelector('#query-run').click();
         return document.querySelector('#query-result').hidden;",
        vec![],
    )
    .await;
    assert_eq!(
        cleared, true,
        "the last answer is cleared as a query starts"
    );
    text_when(c, "#query-op", |t| t == "avg").await;
    let text = text_when(c, "#query-value", |t| !t.is_empty()).await;
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
    assert!(decimals <= 3, "avg at a readable precision: {text}");
    let value: f64 = text.parse().unwrap();
    let values = member_values(c).await;
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    assert!((value - mean).abs() <= 5e-4, "{value} vs {values:?}");
    assert_eq!(text_when(c, "#query-unit", |t| !t.is_empty()).await, "°C");
}

/// Anycast: one member answers, the others were not needed, not missing, and the
/// entity's reliability stays 100 %.
async fn anycast_needs_one_member(c: &Client, entity: &str) {
    click(c, "#query-anycast").await;
    text_when(c, "#query-answered", |t| t.starts_with("1 of 3")).await;
    let codes = texts(c, "#member-table tbody td:nth-child(2)").await;
    assert!(!codes.iter().any(|t| t == "missing"), "{codes:?}");
    assert_eq!(
        codes.iter().filter(|t| *t == "not needed").count(),
        2,
        "{codes:?}"
    );
    for class in ["member-rel", "group-rel"] {
        let css = format!("tr[data-entity={entity}] .{class}");
        assert_eq!(
            text_when(c, &css, |t| !t.is_empty()).await,
            "100 %",
            "{css}"
        );
    }
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
    every_control_has_a_name(&c).await;

    // A name the EM would refuse is refused in the page, with the EM's rule beside it.
    fill(&c, "#create-form [name=name]", "te~mps").await;
    fill(&c, "#create-form [name=er]", &uris[0]).await;
    click(&c, "#create").await;
    let error = text_when(&c, "#err-name", |t| !t.is_empty()).await;
    assert!(
        error.contains("te~mps") && error.contains("letters, digits"),
        "{error}"
    );
    assert_eq!(invalid(&c, "name").await, Some("true".into()));
    assert!(text_when(&c, "#entities-empty", |t| !t.is_empty())
        .await
        .contains("No entities"));
    screenshot(&c, "01-name-refused").await;

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
    screenshot(&c, "02-create-refused").await;

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
    assert!(in_view(&c, "#entity-result").await, "the result is in view");
    let row = text_when(&c, "tr[data-entity=temps]", |t| t.contains("unicast 3")).await;
    assert!(row.starts_with("temps"), "{row}");
    screenshot(&c, "03-created").await;

    // Profile, in view.
    click(&c, "tr[data-entity=temps] button.profile").await;
    let doc = profile_with(&c, "er").await;
    assert_eq!(doc["er"], serde_json::json!(uris));
    assert_eq!(doc["eo"], serde_json::json!(["lst", "avg"]));
    assert_eq!(doc["delay"], "auto");
    assert!(in_view(&c, "#profile-text").await, "the profile is in view");
    screenshot(&c, "04-profile").await;

    // Query with the default operation: every member's value in the table.
    row_query_gets_every_member(&c, "temps").await;
    screenshot(&c, "05-query-default").await;

    // avg: the combined value is the mean of the members' values shown.
    query_avg_is_the_members_mean(&c).await;
    screenshot(&c, "06-query-avg").await;

    // Anycast: the first reply wins; the others were not needed.
    anycast_needs_one_member(&c, "temps").await;
    screenshot(&c, "07-query-anycast").await;

    // Another entity chosen: the answer about temps goes.
    fill(&c, "#create-form [name=name]", "hall").await;
    fill(&c, "#create-form [name=er]", &uris[1]).await;
    click(&c, "#create").await;
    text_when(&c, "tr[data-entity=hall]", |t| t.contains("unicast 1")).await;
    select(&c, "#query-entity", "hall").await;
    let shown = displayed(&c, "#query-result").await;
    assert!(!shown, "no answer of another entity stays on screen");
    select(&c, "#query-entity", "temps").await;

    // Keyboard focus is visible.
    click(&c, "#query-form [name=delay]").await;
    c.active_element()
        .await
        .unwrap()
        .send_keys(&Key::Tab.to_string())
        .await
        .unwrap();
    let outline = js(
        &c,
        "const e = document.activeElement, s = getComputedStyle(e);
         return [e.id, s.outlineStyle, parseFloat(s.outlineWidth)];",
        vec![],
    )
    .await;
    assert_eq!(outline[0], "query-run", "{outline}");
    assert!(
        outline[1] != "none" && outline[2].as_f64().unwrap() >= 2.0,
        "a visible focus ring: {outline}"
    );

    // ?fanout only after the confirmation: dismissed, nothing is sent; accepted, every
    // member's answer comes back.
    click(&c, "#fanout-run").await;
    c.dismiss_alert().await.expect("a confirmation dialog");
    let hidden = displayed(&c, "#fanout-result").await;
    assert!(!hidden, "a dismissed fan-out shows no result");
    click(&c, "#fanout-run").await;
    c.accept_alert().await.expect("a confirmation dialog");
    text_when(&c, "#fanout-summary", |t| t.contains("PUT to temps")).await;
    let rows = texts(&c, "#fanout-table tbody tr").await;
    for uri in &uris {
        assert!(rows.iter().any(|r| r.contains(uri.as_str())), "{rows:?}");
    }
    let raw = prop(&c, "#fanout-raw", "textContent").await;
    assert!(
        raw.contains("\"fanout\""),
        "the raw reply behind a toggle: {raw}"
    );
    let fits = js(
        &c,
        "const e = document.querySelector('#fanout-result');
         return e.scrollWidth <= e.clientWidth;",
        vec![],
    )
    .await;
    assert_eq!(fits, true, "the fan-out result fits its box");
    assert!(
        in_view(&c, "#fanout-result").await,
        "the fan-out result is in view"
    );
    screenshot(&c, "08-fanout").await;

    // A wide screen puts entities, query and profile side by side; a narrow one stacks them.
    c.set_window_size(1600, 1000).await.unwrap();
    let entities = rect(&c, "#entities-panel").await;
    let query = rect(&c, "#query-panel").await;
    let profile = rect(&c, "#profile-panel").await;
    assert!(
        query[0] >= entities[2] && query[1] < entities[3],
        "side by side: {entities:?} {query:?}"
    );
    assert!(
        profile[0] >= query[2],
        "profile beside: {query:?} {profile:?}"
    );
    screenshot(&c, "09-wide").await;
    c.set_window_size(700, 1000).await.unwrap();
    let entities = rect(&c, "#entities-panel").await;
    let query = rect(&c, "#query-panel").await;
    assert!(
        query[1] >= entities[3],
        "one column: {entities:?} {query:?}"
    );
    screenshot(&c, "10-narrow").await;
    c.set_window_size(1200, 1000).await.unwrap();

    // Live: observe every member of the entity, one line per member with its latest value.
    click(&c, "nav [data-tab=live]").await;
    fill(&c, "#live-target", "temps").await;
    click(&c, "#live-start").await;
    let legend = text_when(&c, "#live-legend", |t| {
        t.lines().count() == 3
            && t.lines().all(|l| {
                l.rsplit_once(": ").is_some_and(|(_, v)| {
                    v.split_once(' ')
                        .is_some_and(|(n, u)| n.parse::<f64>().is_ok() && u == "°C")
                })
            })
    })
    .await;
    for uri in &uris {
        assert!(legend.contains(uri.as_str()), "{legend}");
    }
    // The sensors notify every other second: two values each make lines.
    let deadline = Instant::now() + PAGE_WAIT;
    while js(
        &c,
        "return liveChart.data.slice(1).every((s) => s.filter((v) => v !== null).length >= 2);",
        vec![],
    )
    .await
        != true
    {
        assert!(Instant::now() < deadline, "two values of every member");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    live_chart_has_time_unit_and_legend(&c, &uris).await;
    screenshot(&c, "11-live").await;
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
    screenshot(&c, "12-explore-get").await;
    let em = text_when(&c, "#em-uri", |t| t.contains("coap://")).await;
    let em = em.split_whitespace().last().unwrap().to_string();
    fill(&c, "#request-uri", &format!("{em}/e/temps")).await;
    select(&c, "#request-accept", "senml+cbor").await;
    click(&c, "#request-send").await;
    let diag = text_when(&c, "#response-body", |t| t.contains("bn")).await;
    assert!(diag.starts_with('['), "diagnostic notation: {diag}");
    assert!(text_when(&c, "#response-type", |t| !t.is_empty()).await == "application/senml+cbor");
    screenshot(&c, "13-explore-cbor").await;

    // Delete, confirmed in the browser's dialog; each member's result is shown.
    click(&c, "nav [data-tab=entities]").await;
    click(&c, "tr[data-entity=temps] button.delete").await;
    c.accept_alert().await.expect("a confirmation dialog");
    let result = text_when(&c, "#entity-result", |t| t.starts_with("2.02")).await;
    assert!(result.contains("temps"), "{result}");
    assert!(in_view(&c, "#entity-result").await, "the result is in view");
    click(&c, "tr[data-entity=hall] button.delete").await;
    c.accept_alert().await.expect("a confirmation dialog");
    text_when(&c, "#entity-result", |t| t.contains("hall")).await;
    text_when(&c, "#entities-empty", |t| t.contains("No entities")).await;
    screenshot(&c, "14-deleted").await;

    c.close().await.unwrap();
}

/// Every form control has a label, every button a name, and the status areas are live
/// regions a screen reader announces.
async fn every_control_has_a_name(c: &Client) {
    let unnamed = js(
        c,
        "const name = (e) => (e.getAttribute('aria-label') || e.textContent || '').trim();
         const out = [];
         for (const e of document.querySelectorAll('input, select, textarea'))
           if (!e.labels.length && !e.getAttribute('aria-label')) out.push(e.outerHTML);
         for (const b of document.querySelectorAll('button')) if (!name(b)) out.push(b.outerHTML);
         for (const id of ['entity-result', 'query-answered', 'query-error', 'fanout-result', 'live-status'])
           if (!document.getElementById(id).getAttribute('aria-live')) out.push(id + ' is not live');
         return out;",
        vec![],
    )
    .await;
    assert_eq!(unnamed, serde_json::json!([]), "controls without a name");
}

/// The live chart is uPlot's: a canvas, time labels on the x axis, the members' unit on the
/// y axis, and a legend with every member in the colour of its line in the member list.
async fn live_chart_has_time_unit_and_legend(c: &Client, uris: &[String]) {
    let chart = js(
        c,
        "const colour = (e, p) => getComputedStyle(e)[p];
         return {
           canvas: !!document.querySelector('#live-chart .uplot canvas'),
           times: liveChart.axes[0]._values || [],
           yLabel: liveChart.axes[1].label,
           legend: [...document.querySelectorAll('#live-chart .u-legend .u-series')].slice(1)
             .map((s) => [s.querySelector('.u-label').textContent,
                          colour(s.querySelector('.u-marker'), 'borderColor')]),
           list: [...document.querySelectorAll('#live-legend li')]
             .map((li) => [li.textContent.split(': ')[0],
                           colour(li.querySelector('.swatch'), 'backgroundColor')]),
         };",
        vec![],
    )
    .await;
    assert_eq!(chart["canvas"], true, "{chart}");
    let times = chart["times"].as_array().expect("x labels");
    assert!(
        !times.is_empty()
            && times.iter().all(|t| {
                let t = t.as_str().unwrap_or("");
                t.len() == 8 && t.split(':').all(|n| n.parse::<u8>().is_ok())
            }),
        "time labels on x: {chart}"
    );
    assert!(chart["yLabel"].as_str().unwrap().contains("°C"), "{chart}");
    assert_eq!(
        chart["legend"], chart["list"],
        "legend and member list agree"
    );
    let labels: Vec<&str> = chart["legend"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l[0].as_str().unwrap())
        .collect();
    assert_eq!(labels, uris, "{chart}");
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
    row_query_gets_every_member(&c, "cold").await;
    screenshot(&c, "mc-03-query-default").await;

    query_avg_is_the_members_mean(&c).await;
    screenshot(&c, "mc-04-query-avg").await;

    anycast_needs_one_member(&c, "cold").await;
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
