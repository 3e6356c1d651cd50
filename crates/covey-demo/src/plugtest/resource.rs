//! The plugtest resources by path, and how they are listed in `/.well-known/core`.

use std::time::Duration;

use covey_core::OptionNumber;
use covey_proto::Received;

use super::super::path;
use super::{LARGE_SIZE, OBSERVED};

/// Which plugtest resource a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlugtestResource {
    /// `/test`.
    Test,
    /// `/seg1/seg2/seg3`.
    LongPath,
    /// `/query`.
    Query,
    /// `/separate`.
    Separate,
    /// `/location-query`.
    LocationQuery,
    /// `/location1` and below: what POST `/test` points to.
    Location,
    /// `/multi-format`.
    MultiFormat,
    /// `/validate`.
    Validate,
    /// `/create1`.
    Create1,
    /// `/large`.
    Large,
    /// `/large-update`.
    LargeUpdate,
    /// `/large-create`.
    LargeCreate,
    /// `/large-create/N`: what POST `/large-create` made.
    LargeCreated,
    /// `/large-post`.
    LargePost,
    /// `/obs` (0) and `/obs-non` (1).
    Observed(usize),
    /// `/link1` .. `/link3`.
    Link(u8),
    /// `/path`.
    Path,
    /// `/path/sub1` .. `/path/sub3`.
    PathSub(u8),
}

/// The resources at exactly one path.
const EXACT: [(&[&str], PlugtestResource); 21] = [
    (&["test"], PlugtestResource::Test),
    (&["seg1", "seg2", "seg3"], PlugtestResource::LongPath),
    (&["query"], PlugtestResource::Query),
    (&["separate"], PlugtestResource::Separate),
    (&["location-query"], PlugtestResource::LocationQuery),
    (&["multi-format"], PlugtestResource::MultiFormat),
    (&["validate"], PlugtestResource::Validate),
    (&["create1"], PlugtestResource::Create1),
    (&["large"], PlugtestResource::Large),
    (&["large-update"], PlugtestResource::LargeUpdate),
    (&["large-create"], PlugtestResource::LargeCreate),
    (&["large-post"], PlugtestResource::LargePost),
    (&["obs"], PlugtestResource::Observed(0)),
    (&["obs-non"], PlugtestResource::Observed(1)),
    (&["link1"], PlugtestResource::Link(1)),
    (&["link2"], PlugtestResource::Link(2)),
    (&["link3"], PlugtestResource::Link(3)),
    (&["path"], PlugtestResource::Path),
    (&["path", "sub1"], PlugtestResource::PathSub(1)),
    (&["path", "sub2"], PlugtestResource::PathSub(2)),
    (&["path", "sub3"], PlugtestResource::PathSub(3)),
];

impl PlugtestResource {
    /// The resource `request` addresses, if any.
    pub fn of(request: &Received<'_>) -> Option<PlugtestResource> {
        if let Some((_, r)) = EXACT.iter().find(|(p, _)| path::is(request, p)) {
            return Some(*r);
        }
        if path::starts_with(request, &["location1"]) {
            return Some(PlugtestResource::Location);
        }
        let below_large_create = path::starts_with(request, &["large-create"])
            && request.message.options_of(OptionNumber::URI_PATH).count() > 1;
        below_large_create.then_some(PlugtestResource::LargeCreated)
    }
}

/// The link-format entries of the visible resources, in the order they are listed;
/// `/obs` and `/obs-non` name their `period`.
pub fn links(period: Duration) -> Vec<String> {
    let mut links: Vec<String> = [
        r#"</test>;ct=0;title="Default test resource""#,
        r#"</seg1/seg2/seg3>;ct=0;title="Long path resource""#,
        r#"</query>;ct=0;title="Resource accepting query parameters""#,
        r#"</separate>;ct=0;title="Resource which cannot be served immediately""#,
        r#"</location-query>;title="Perform POST transaction with responses containing several Location-Query options""#,
        r#"</multi-format>;ct="0 41";title="Resource that exists in different content formats (text/plain utf8 and application/xml)""#,
        r#"</validate>;ct=0;title="Resource which varies""#,
        r#"</create1>;title="Resource which does not exist yet (to perform atomic PUT)""#,
    ]
    .map(str::to_string)
    .into();
    links.extend([
        format!(r#"</large>;rt="block";ct=0;sz={LARGE_SIZE};title="Large resource""#),
        format!(
            r#"</large-update>;rt="block";ct=0;sz={LARGE_SIZE};title="Large resource that can be updated using PUT method""#
        ),
        r#"</large-create>;rt="block";title="Large resource that can be created using POST method""#.to_string(),
        r#"</large-post>;rt="block";title="Handle POST with two-way blockwise transfer""#.to_string(),
    ]);
    for (path, _, what) in OBSERVED {
        links.push(format!(
            r#"</{path}>;rt="observe";ct=0;obs;title="Observable resource which changes every {} seconds ({what})""#,
            period.as_secs_f64()
        ));
    }
    links.extend(
        [
            r#"</link1>;rt="Type1 Type2";if="If1""#,
            r#"</link2>;rt="Type2 Type3";if="If2""#,
            r#"</link3>;rt="Type1 Type3";if="foo""#,
            r#"</path>;ct=40;title="Hierarchical link description entry""#,
        ]
        .map(str::to_string),
    );
    for n in 1..=3 {
        links.push(format!(
            r#"</path/sub{n}>;ct=0;title="Hierarchical link description sub-resource {n}""#
        ));
    }
    links
}
