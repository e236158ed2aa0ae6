// Package lint judges the graph internal/fleet loads: every rule is a pure
// function of a cluster's graph (Rules lists them with their stable ids
// and severities), Run applies them to every cluster and reports a finding
// several clusters share once, and Write prints findings as text, JSON,
// SARIF 2.1.0, GitHub workflow annotations or a Markdown PR comment.
// Graphs and WriteGraph print the graph itself (dot, Mermaid, JSON).
//
// docs/lint.md says for each rule why it matters and how to fix it. Two
// judgements are worth knowing here:
//
//   - prune-controllers spares the root sync. `flux bootstrap` puts the
//     controllers, their CRDs and the flux-system namespace in the root
//     Kustomization with prune: true, and that is how Flux users manage
//     the toolkit from Git; deleting the root is a deliberate act. Any
//     other Kustomization holding them is one moved directory away from
//     deleting the controllers that would put them back.
//   - Findings that depend on the graph being complete (dangling-dependency,
//     missing-source) are warnings instead of errors when a Kustomization
//     of the cluster was not built because its source is another
//     repository: what it would apply is unknown.
//
// The loader never fetches remote bases (lint stays offline): a
// Kustomization with one is reported by remote-base, as an error under
// --no-remote-bases and as an info otherwise (it is not analysed).
package lint
