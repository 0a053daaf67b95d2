//! Each task's own state (its files, its columns, the settings only it has), kept for the page's
//! life in one store of the studio, so that [`Studio`](super::Studio) has no field per task: a
//! task's module asks for its state by type ([`Studio::own`](super::Studio::own)), and the first
//! ask makes it.

use std::any::{Any, TypeId};
use std::collections::HashMap;

use leptos::prelude::*;

/// A task's own state: signal handles, so `Copy`, made empty by [`TaskState::new`].
pub(crate) trait TaskState: Copy + Send + Sync + 'static {
    /// The state before any file is read.
    fn new() -> Self;
}

/// The states made so far, by type, and the owner that makes them.
#[derive(Clone, Copy)]
pub(crate) struct TaskStates(StoredValue<(Owner, HashMap<TypeId, Box<dyn Any + Send + Sync>>)>);

impl TaskStates {
    /// No state yet; each is made under the current reactive owner (the studio's), so that its
    /// signals outlive the panel that first asks for them.
    pub fn new() -> Self {
        Self(StoredValue::new((Owner::current().unwrap_or_default(), HashMap::new())))
    }

    /// The state of type `S`, made on the first ask.
    pub fn get<S: TaskState>(self) -> S {
        if let Some(state) = self.0.with_value(|(_, states)| states.get(&TypeId::of::<S>()).and_then(|s| s.downcast_ref::<S>().copied())) {
            return state;
        }
        let owner = self.0.with_value(|(owner, _)| owner.clone());
        let state = owner.with(S::new);
        self.0.update_value(|(_, states)| {
            states.insert(TypeId::of::<S>(), Box::new(state));
        });
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct Counter(RwSignal<u32>);

    impl TaskState for Counter {
        fn new() -> Self {
            Self(RwSignal::new(0))
        }
    }

    /// One state per type: a second ask returns the first one's signals, and a state made while
    /// a child owner is current outlives that owner.
    #[test]
    fn one_state_per_type_outliving_the_first_asker() {
        let owner = Owner::new();
        owner.set();
        let states = TaskStates::new();
        let child = owner.child();
        let first = child.with(|| states.get::<Counter>());
        first.0.set(3);
        drop(child);
        assert_eq!(states.get::<Counter>().0.get_untracked(), 3);
    }
}
