//! Residuals (Java `ResidualEvaluator`): what of a row filter is left to check on the rows
//! of a file, given its partition tuple. Per predicate: if its strict projection holds for
//! the partition, every row matches (`true`); if its inclusive projection fails, none does
//! (`false`); otherwise the predicate stays. Projections are made once per spec, at `new`.

use super::bind::{BoundExpr, BoundPredicate};
use super::projection::{inclusive_projection, strict_projection};
use super::struct_evaluator::StructEvaluator;
use crate::error::Result;
use crate::spec::{PartitionSpec, StructValue};

#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one node per predicate, built once per spec
enum Node {
    True,
    False,
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Pred { pred: BoundPredicate, strict: StructEvaluator, inclusive: StructEvaluator },
    Keep(BoundExpr),
}

#[derive(Debug, Clone)]
pub struct ResidualEvaluator {
    root: Node,
    unpartitioned: Option<BoundExpr>,
}

impl ResidualEvaluator {
    /// `filter` is bound to the table schema; `spec` is the file's partition spec.
    pub fn new(filter: &BoundExpr, spec: &PartitionSpec) -> Result<Self> {
        let expr = filter.clone().rewrite_not();
        if spec.fields().is_empty() {
            return Ok(Self { root: Node::True, unpartitioned: Some(expr) });
        }
        Ok(Self { root: build(&expr, spec)?, unpartitioned: None })
    }

    /// The residual for a file with this partition tuple.
    pub fn residual_for(&self, partition: &StructValue) -> BoundExpr {
        if let Some(e) = &self.unpartitioned {
            return e.clone();
        }
        eval(&self.root, partition)
    }
}

fn build(e: &BoundExpr, spec: &PartitionSpec) -> Result<Node> {
    Ok(match e {
        BoundExpr::True => Node::True,
        BoundExpr::False => Node::False,
        BoundExpr::And(l, r) => Node::And(Box::new(build(l, spec)?), Box::new(build(r, spec)?)),
        BoundExpr::Or(l, r) => Node::Or(Box::new(build(l, spec)?), Box::new(build(r, spec)?)),
        // rewrite_not leaves no NOT; were one left, it stays whole in the residual
        BoundExpr::Not(_) => Node::Keep(e.clone()),
        BoundExpr::Predicate(p) => {
            let single = BoundExpr::Predicate(p.clone());
            Node::Pred {
                pred: p.clone(),
                strict: StructEvaluator::new(strict_projection(&single, spec)?, spec, true),
                inclusive: StructEvaluator::new(inclusive_projection(&single, spec)?, spec, false),
            }
        }
    })
}

fn eval(n: &Node, part: &StructValue) -> BoundExpr {
    match n {
        Node::True => BoundExpr::True,
        Node::False => BoundExpr::False,
        Node::And(l, r) => BoundExpr::and(eval(l, part), eval(r, part)),
        Node::Or(l, r) => BoundExpr::or(eval(l, part), eval(r, part)),
        Node::Keep(e) => e.clone(),
        Node::Pred { pred, strict, inclusive } => {
            if strict.eval(part) {
                BoundExpr::True
            } else if !inclusive.eval(part) {
                BoundExpr::False
            } else {
                BoundExpr::Predicate(pred.clone())
            }
        }
    }
}
