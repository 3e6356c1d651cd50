//! Who hears whom, and which way packets go.
//!
//! Audibility is symmetric: node a hears node b's transmissions (for reception, collisions and
//! CCA alike) exactly when b hears a's. It comes from positions and a radio range, or from an
//! explicit neighbour list. Hidden terminals follow: two senders out of each other's range both
//! sense an idle channel and collide at a receiver that hears both.
//!
//! Routing is route-over along a tree given by parent pointers (RPL storing mode): a packet
//! climbs towards the root until it reaches an ancestor of its destination, then descends.
//! Every hop is its own CSMA/CA transmission of the whole (re-fragmented) datagram, and each
//! forwarder reassembles it first. Without a tree every destination is one hop away.

use super::super::NodeId;

/// Why a topology was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// A node index is out of range.
    #[error("node {0} does not exist")]
    NoSuchNode(NodeId),
    /// The parent pointers contain a cycle.
    #[error("the parent pointers form a cycle through node {0}")]
    Cycle(NodeId),
    /// A node's parent cannot hear it.
    #[error("node {0} cannot hear its parent")]
    ParentOutOfRange(NodeId),
}

/// A point in the plane, metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// East, metres.
    pub x: f64,
    /// North, metres.
    pub y: f64,
}

impl Position {
    /// Distance to `other`, metres.
    pub fn distance(&self, other: &Position) -> f64 {
        (self.x - other.x).hypot(self.y - other.y)
    }
}

/// Audibility between nodes plus an optional routing tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    audible: Vec<Vec<bool>>,
    parent: Vec<Option<NodeId>>,
    positions: Option<Vec<Position>>,
}

impl Topology {
    /// `nodes` nodes that all hear each other (one hop, no hidden terminals).
    pub fn full_mesh(nodes: usize) -> Self {
        let mut audible = vec![vec![true; nodes]; nodes];
        for (i, row) in audible.iter_mut().enumerate() {
            row[i] = false;
        }
        Topology {
            audible,
            parent: vec![None; nodes],
            positions: None,
        }
    }

    /// Nodes that hear each other exactly along the given (undirected) `links`.
    pub fn from_links(nodes: usize, links: &[(NodeId, NodeId)]) -> Result<Self, TopologyError> {
        let mut audible = vec![vec![false; nodes]; nodes];
        for &(a, b) in links {
            if a >= nodes {
                return Err(TopologyError::NoSuchNode(a));
            }
            if b >= nodes {
                return Err(TopologyError::NoSuchNode(b));
            }
            if a != b {
                audible[a][b] = true;
                audible[b][a] = true;
            }
        }
        Ok(Topology {
            audible,
            parent: vec![None; nodes],
            positions: None,
        })
    }

    /// Nodes at `positions` that hear each other within `range_m` metres.
    pub fn from_positions(positions: Vec<Position>, range_m: f64) -> Self {
        let n = positions.len();
        let mut audible = vec![vec![false; n]; n];
        for a in 0..n {
            for b in 0..n {
                audible[a][b] = a != b && positions[a].distance(&positions[b]) <= range_m;
            }
        }
        Topology {
            audible,
            parent: vec![None; n],
            positions: Some(positions),
        }
    }

    /// Routes along the tree of `parents` (`None` for the root or roots); each node must hear
    /// its parent.
    pub fn with_tree(mut self, parents: Vec<Option<NodeId>>) -> Result<Self, TopologyError> {
        let n = self.nodes();
        if parents.len() != n {
            return Err(TopologyError::NoSuchNode(parents.len().min(n)));
        }
        for (node, parent) in parents.iter().enumerate() {
            if let Some(p) = *parent {
                if p >= n {
                    return Err(TopologyError::NoSuchNode(p));
                }
                if !self.audible[node][p] {
                    return Err(TopologyError::ParentOutOfRange(node));
                }
            }
        }
        // A walk up from any node must end at a root within n steps.
        for start in 0..n {
            let mut at = start;
            let mut steps = 0;
            while let Some(p) = parents[at] {
                at = p;
                steps += 1;
                if steps > n {
                    return Err(TopologyError::Cycle(start));
                }
            }
        }
        self.parent = parents;
        Ok(self)
    }

    /// Routes along a shortest-hop tree rooted at `root` over the audibility relation
    /// (breadth first, ties to the lowest node index); nodes that cannot reach the root stay
    /// roots of their own.
    pub fn with_shortest_path_tree(self, root: NodeId) -> Result<Self, TopologyError> {
        let n = self.nodes();
        if root >= n {
            return Err(TopologyError::NoSuchNode(root));
        }
        let mut parents = vec![None; n];
        let mut reached = vec![false; n];
        reached[root] = true;
        let mut frontier = std::collections::VecDeque::from([root]);
        while let Some(at) = frontier.pop_front() {
            for next in 0..n {
                if !reached[next] && self.hears(next, at) {
                    reached[next] = true;
                    parents[next] = Some(at);
                    frontier.push_back(next);
                }
            }
        }
        self.with_tree(parents)
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.audible.len()
    }

    /// Whether `listener` hears `sender`'s transmissions.
    pub fn hears(&self, listener: NodeId, sender: NodeId) -> bool {
        self.audible
            .get(listener)
            .and_then(|row| row.get(sender))
            .copied()
            .unwrap_or(false)
    }

    /// Nodes that hear `sender`.
    pub fn neighbours(&self, sender: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.nodes()).filter(move |&n| self.hears(n, sender))
    }

    /// The node's tree parent.
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        self.parent.get(node).copied().flatten()
    }

    /// Whether the node has tree children.
    pub fn has_children(&self, node: NodeId) -> bool {
        self.parent.contains(&Some(node))
    }

    /// Node positions, if the topology was built from them.
    pub fn positions(&self) -> Option<&[Position]> {
        self.positions.as_deref()
    }

    /// Whether a routing tree is set.
    pub fn has_tree(&self) -> bool {
        self.parent.iter().any(Option::is_some)
    }

    /// Depth of `node` in the tree: its hop count to the root.
    pub fn depth(&self, node: NodeId) -> usize {
        let mut depth = 0;
        let mut at = node;
        while let Some(p) = self.parent(at) {
            at = p;
            depth += 1;
            if depth > self.nodes() {
                break;
            }
        }
        depth
    }

    /// Whether `ancestor` is `node` or lies on its path to the root.
    fn is_ancestor(&self, ancestor: NodeId, node: NodeId) -> bool {
        let mut at = node;
        for _ in 0..=self.nodes() {
            if at == ancestor {
                return true;
            }
            match self.parent(at) {
                Some(p) => at = p,
                None => return false,
            }
        }
        false
    }

    /// The next hop from `at` towards `destination`.
    pub fn next_hop(&self, at: NodeId, destination: NodeId) -> NodeId {
        if !self.has_tree() || at == destination {
            return destination;
        }
        if self.is_ancestor(at, destination) {
            // Descend: the child of `at` on the path to the destination.
            let mut child = destination;
            for _ in 0..=self.nodes() {
                match self.parent(child) {
                    Some(p) if p == at => return child,
                    Some(p) => child = p,
                    None => break,
                }
            }
            return destination;
        }
        // Climb; a root that is no ancestor of the destination tries it directly.
        self.parent(at).unwrap_or(destination)
    }

    /// Hops a unicast packet takes from `from` to `to`.
    pub fn hops(&self, from: NodeId, to: NodeId) -> usize {
        let mut at = from;
        let mut hops = 0;
        while at != to && hops <= self.nodes() {
            at = self.next_hop(at, to);
            hops += 1;
        }
        hops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain 0 - 1 - 2 - 3 and a branch 1 - 4, rooted at 0.
    fn tree() -> Topology {
        Topology::from_links(5, &[(0, 1), (1, 2), (2, 3), (1, 4)])
            .and_then(|t| t.with_tree(vec![None, Some(0), Some(1), Some(2), Some(1)]))
            .expect("a valid topology")
    }

    #[test]
    fn routes_climb_then_descend() {
        let t = tree();
        assert_eq!(t.next_hop(0, 3), 1);
        assert_eq!(t.next_hop(1, 3), 2);
        assert_eq!(t.next_hop(3, 0), 2);
        assert_eq!(t.next_hop(3, 4), 2);
        assert_eq!(t.next_hop(1, 4), 4);
        assert_eq!(t.hops(0, 3), 3);
        assert_eq!(t.hops(3, 4), 3);
        assert_eq!(t.depth(3), 3);
    }

    #[test]
    fn cycles_and_unheard_parents_are_refused() {
        let links = Topology::from_links(3, &[(0, 1), (1, 2)]);
        let cyclic = links
            .clone()
            .and_then(|t| t.with_tree(vec![Some(1), Some(0), Some(1)]));
        assert!(matches!(cyclic, Err(TopologyError::Cycle(_))));
        let far = links.and_then(|t| t.with_tree(vec![None, Some(0), Some(0)]));
        assert_eq!(far, Err(TopologyError::ParentOutOfRange(2)));
    }

    #[test]
    fn shortest_path_tree_gives_each_node_its_hop_distance() {
        // A 5-node line 10 m apart with a 15 m range: depth equals the index.
        let line = (0..5)
            .map(|i| Position {
                x: 10.0 * f64::from(i),
                y: 0.0,
            })
            .collect();
        let t = Topology::from_positions(line, 15.0).with_shortest_path_tree(0);
        let depths: Vec<usize> = t.map_or(vec![], |t| (0..5).map(|n| t.depth(n)).collect());
        assert_eq!(depths, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn positions_give_audibility_within_range() {
        let p = |x| Position { x, y: 0.0 };
        let t = Topology::from_positions(vec![p(0.0), p(10.0), p(25.0)], 15.0);
        assert!(t.hears(0, 1) && t.hears(1, 2));
        assert!(!t.hears(0, 2));
        assert!(!t.hears(0, 0));
    }
}
