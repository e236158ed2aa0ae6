// Package applymemo owns the kustomize controller's apply memo and its
// store across restarts (docs/design/0020-large-and-idle-fleets.md,
// decisions 1 and 5). Memos keeps one ssa.Memo per Kustomization, tied to
// its uid and the service account it applies as, so that Apply skips the
// dry-run of an object nobody wrote since; Store saves them in sharded
// Secrets of the controller's namespace (one format byte, then gzipped
// gob) and loads them once the controller leads, dropping the memos of
// Kustomizations that are gone.
//
// It knows nothing of reconciles: the controller asks for the memo of an
// object (Memos.Of), forgets the deleted ones (Memos.Forget), adds the
// Store to its manager and waits for its load (Store.Wait) before the
// first reconcile uses a memo. What a memo holds is a claim Apply checks
// against the cluster, so a memo lost or unreadable costs dry-runs, never
// a wrong apply.
package applymemo
