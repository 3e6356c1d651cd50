//! The multi-hop trees of the group-communication testbed: how many members sit at each hop
//! count (the paper's Table 7), where they stand, and who hears whom.
//!
//! The paper gives only the mean and the maximum hop count per group size (RPL built the
//! tree from fixed node positions in a 66 m × 20 m room). Each profile below is the integer
//! split of G members over depths 1..=max whose mean is the paper's to one decimal.
//!
//! Geometry: the gateway stands at the origin; depth-k members stand on a ring of radius
//! k · [`RING_STEP_M`], spread evenly at depth 1 and next to their parent further out; every
//! node hears every node within [`RADIO_RANGE_M`]. So a parent always hears its children,
//! the gateway hears only depth 1, and depth-1 members on opposite sides of the gateway do
//! not hear each other: they are hidden terminals for each other at the gateway, as members
//! spread around a gateway in a large room are.

use std::f64::consts::PI;

use covey_sim::media::ieee802154::{Position, Topology, TopologyError};
use covey_sim::media::NodeId;

/// Metres between successive rings of the tree.
pub const RING_STEP_M: f64 = 20.0;

/// Radio range, metres: more than one ring step, less than two.
pub const RADIO_RANGE_M: f64 = 30.0;

/// Members at each hop count for one group size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HopProfile {
    /// G.
    pub members: usize,
    /// `per_depth[k]`: members k + 1 hops from the gateway.
    pub per_depth: &'static [usize],
    /// The paper's mean hop count (Table 7), or the profile's own where the paper has none.
    pub paper_mean: f64,
    /// The paper's maximum hop count.
    pub paper_max: usize,
}

/// Table 7 (G = 5, 10, 20, 29, 40) and, for the interference experiments' G = 30, Table 7's
/// 29-member tree with one more member at two hops.
pub const PROFILES: [HopProfile; 6] = [
    HopProfile {
        members: 5,
        per_depth: &[5],
        paper_mean: 1.0,
        paper_max: 1,
    },
    HopProfile {
        members: 10,
        per_depth: &[6, 4],
        paper_mean: 1.4,
        paper_max: 2,
    },
    HopProfile {
        members: 20,
        per_depth: &[9, 8, 3],
        paper_mean: 1.7,
        paper_max: 3,
    },
    HopProfile {
        members: 29,
        per_depth: &[10, 15, 4],
        paper_mean: 1.8,
        paper_max: 3,
    },
    HopProfile {
        members: 30,
        per_depth: &[10, 16, 4],
        paper_mean: 1.8,
        paper_max: 3,
    },
    HopProfile {
        members: 40,
        per_depth: &[11, 13, 8, 5, 3],
        paper_mean: 2.4,
        paper_max: 5,
    },
];

impl HopProfile {
    /// The profile for `members`, if the lab has one.
    pub fn for_group(members: usize) -> Option<HopProfile> {
        PROFILES.iter().copied().find(|p| p.members == members)
    }

    /// Mean hop count of the profile.
    pub fn mean(&self) -> f64 {
        let total: usize = self
            .per_depth
            .iter()
            .enumerate()
            .map(|(k, n)| (k + 1) * n)
            .sum();
        total as f64 / self.members.max(1) as f64
    }

    /// Deepest hop count of the profile.
    pub fn max(&self) -> usize {
        self.per_depth.len()
    }

    /// Parents and positions of the gateway (node 0) and the members (nodes 1..=G): depth-k
    /// members take depth-(k−1) parents in turn.
    pub fn layout(&self) -> (Vec<Option<NodeId>>, Vec<Position>) {
        let mut parents = vec![None];
        let mut positions = vec![Position { x: 0.0, y: 0.0 }];
        let mut angles = vec![0.0];
        let mut previous: Vec<NodeId> = vec![0];
        for (k, &count) in self.per_depth.iter().enumerate() {
            let radius = RING_STEP_M * (k + 1) as f64;
            let mut level = Vec::with_capacity(count);
            let mut children_of = vec![0usize; previous.len()];
            for i in 0..count {
                let (parent, angle) = if k == 0 {
                    (0, 2.0 * PI * i as f64 / count.max(1) as f64)
                } else {
                    let slot = i % previous.len();
                    let p = previous[slot];
                    // Siblings fan out 8° apart around their parent's bearing.
                    let nth = children_of[slot];
                    children_of[slot] += 1;
                    let side = if nth.is_multiple_of(2) { 1.0 } else { -1.0 };
                    let offset = side * nth.div_ceil(2) as f64 * 8f64.to_radians();
                    (p, angles[p] + offset)
                };
                let id = parents.len();
                parents.push(Some(parent));
                angles.push(angle);
                positions.push(Position {
                    x: radius * angle.cos(),
                    y: radius * angle.sin(),
                });
                level.push(id);
            }
            previous = level;
        }
        (parents, positions)
    }

    /// The topology: audibility from positions, routing along the layout's tree.
    pub fn topology(&self) -> Result<Topology, TopologyError> {
        let (parents, positions) = self.layout();
        Topology::from_positions(positions, RADIO_RANGE_M).with_tree(parents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_have_the_papers_hop_counts() {
        for p in PROFILES {
            assert_eq!(p.per_depth.iter().sum::<usize>(), p.members);
            assert!((p.mean() - p.paper_mean).abs() < 0.05, "{p:?}");
            assert_eq!(p.max(), p.paper_max);
            let t = p.topology().expect("every parent hears its child");
            let depths: Vec<usize> = (1..=p.members).map(|n| t.depth(n)).collect();
            let mean = depths.iter().sum::<usize>() as f64 / p.members as f64;
            assert!((mean - p.paper_mean).abs() < 0.05, "{p:?}: {mean}");
            assert_eq!(depths.iter().max(), Some(&p.paper_max));
        }
    }

    #[test]
    fn the_gateway_hears_only_the_first_ring_and_opposite_members_are_hidden() {
        let p = HopProfile::for_group(10).expect("G = 10");
        let t = p.topology().expect("valid");
        let heard: Vec<NodeId> = t.neighbours(0).collect();
        assert_eq!(heard, (1..=6).collect::<Vec<_>>());
        // Members 1 and 4 stand on opposite sides of the gateway, 40 m apart.
        assert!(!t.hears(1, 4));
        assert!(t.hears(1, 2));
    }
}
