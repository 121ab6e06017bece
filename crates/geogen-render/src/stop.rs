//! Giving up a render while a step runs.
//!
//! A host that no longer wants a render (the studio, when a newer edit supersedes the preview)
//! gives it a [`StopSignal`] in its [`RenderConfig`](crate::RenderConfig). The renderer asks it
//! between steps; a kernel whose single step can take long (a Height-Slang program evaluated at
//! every pixel) asks it as it goes, through its [`KernelContext`](crate::KernelContext), and
//! returns early. What such a kernel leaves is never used: the host gives the render up at the
//! next step. Whole-map solves never see the signal, so a solution shared with other renders is
//! always whole.

use std::fmt;
use std::sync::Arc;

/// Whether the render it belongs to has been given up. The default never says so.
#[derive(Clone, Default)]
pub struct StopSignal(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl StopSignal {
    /// A signal that says "stop" once `requested` returns true.
    pub fn new(requested: impl Fn() -> bool + Send + Sync + 'static) -> StopSignal {
        StopSignal(Some(Arc::new(requested)))
    }

    /// Whether the render has been given up.
    pub fn requested(&self) -> bool {
        self.0.as_ref().is_some_and(|requested| requested())
    }
}

impl fmt::Debug for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "StopSignal(set)" } else { "StopSignal(never)" })
    }
}

/// Two signals are equal when they are the same signal (or both never stop).
impl PartialEq for StopSignal {
    fn eq(&self, other: &StopSignal) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for StopSignal {}
