//! Table maintenance: rewrite planning (compaction), and the other maintenance operations.

pub mod rewrite_plan;
