//! The permissions a policy rule grants, by the names the policy file uses.

use super::action::Action;
use std::str::FromStr;

/// One permission of a rule's `may` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// `read`: GET entities, profiles, listings and `/mc`.
    Read,
    /// `create`: create entities.
    Create,
    /// `change`: change entities' profiles.
    Change,
    /// `delete`: delete entities.
    Delete,
    /// `manage`: create, change and delete entities.
    Manage,
    /// `fanout`: `?fanout` actuation of an entity's members.
    Fanout,
    /// `mc-join`: join groups through `/mc` (within the rule's `groups`).
    McJoin,
    /// `mc-leave`: leave groups through `/mc` (within the rule's `groups`).
    McLeave,
}

/// The names a policy file may use, for messages.
pub const NAMES: &str = "read, create, change, delete, manage, fanout, mc-join, mc-leave";

impl Permission {
    /// Whether it allows `action`, the action's group aside.
    pub fn covers(self, action: &Action) -> bool {
        matches!(
            (self, action),
            (Permission::Read, Action::Read)
                | (Permission::Create | Permission::Manage, Action::Create)
                | (Permission::Change | Permission::Manage, Action::Change)
                | (Permission::Delete | Permission::Manage, Action::Delete)
                | (Permission::Fanout, Action::Fanout)
                | (Permission::McJoin, Action::Join(_))
                | (Permission::McLeave, Action::Leave(_))
        )
    }

    /// Whether it is about multicast groups (and so needs the rule's `groups`).
    pub fn is_membership(self) -> bool {
        matches!(self, Permission::McJoin | Permission::McLeave)
    }
}

impl FromStr for Permission {
    type Err = String;

    fn from_str(name: &str) -> Result<Permission, String> {
        Ok(match name {
            "read" => Permission::Read,
            "create" => Permission::Create,
            "change" => Permission::Change,
            "delete" => Permission::Delete,
            "manage" => Permission::Manage,
            "fanout" => Permission::Fanout,
            "mc-join" => Permission::McJoin,
            "mc-leave" => Permission::McLeave,
            _ => return Err(format!("unknown permission \"{name}\" (one of {NAMES})")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manage_covers_creating_changing_and_deleting_only() {
        for a in [Action::Create, Action::Change, Action::Delete] {
            assert!(Permission::Manage.covers(&a));
        }
        assert!(!Permission::Manage.covers(&Action::Fanout));
        assert!(!Permission::Manage.covers(&Action::Read));
        assert!(!Permission::Create.covers(&Action::Delete));
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = "raed".parse::<Permission>().unwrap_err();
        assert!(e.contains("\"raed\"") && e.contains("mc-join"), "{e}");
        assert_eq!("mc-leave".parse::<Permission>(), Ok(Permission::McLeave));
    }
}
