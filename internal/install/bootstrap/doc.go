// Package bootstrap puts weir under Git's control: it writes weir's own
// manifests into a repository (<path>/flux-system: gotk-components.yaml,
// gotk-sync.yaml, kustomization.yaml), pushes them, installs the
// controllers once, and waits until the cluster runs what was pushed. From
// then on the in-cluster kustomize controller reconciles weir itself from
// Git; bootstrap never applies the components again.
//
// The steps, in order (Run):
//
//  1. Clone the branch into memory (retried once after 2 s; an empty
//     repository or a missing branch starts the branch afresh).
//  2. Generate the three files. kustomization.yaml is written only when it
//     is missing: the user owns it, and patches added to it (seed 003's
//     `args/-` feature gate) survive every later bootstrap.
//  3. Commit (nothing to commit means "up to date") and push; a push the
//     remote refuses because the branch moved is retried once on a fresh
//     clone.
//  4. Only when the flux-system Kustomization does not exist or has never
//     applied a revision: build <path>/flux-system with kustomize (user
//     patches included) and apply the components with server-side apply.
//  5. Create the source Secret unless it exists and no new credentials
//     were given: username/password (and ca.crt) for HTTPS; for SSH the
//     given private key, or a generated deploy key printed for the user,
//     with the host key captured on first contact.
//  6. Apply the GitRepository and Kustomization flux-system with step 4,
//     and when the pushed commit changed gotk-sync.yaml (a new URL or
//     branch cannot reach the cluster through the old one). Otherwise, when
//     a commit was pushed or the Secret changed, ask both to reconcile now
//     (reconcile.fluxcd.io/requestedAt) and wait for them to handle it.
//  7. Wait until the GitRepository's artifact and the Kustomization's
//     applied revision are <branch>@sha1:<HEAD> (older revision formats of
//     the same commit accepted), then until every component Deployment is
//     ready.
//
// A move (gotk-sync.yaml changed, e.g. HTTPS to SSH) races with the
// cluster: until the Kustomization applies the new commit it may apply the
// old GitRepository over the one step 6 applied, and that one must still
// fetch, or the cluster never learns the new commit. So during a move the
// Secret holds the old and the new credentials together; once the cluster
// runs the new commit, the old ones are removed and the GitRepository is
// asked to fetch again with the new ones alone.
//
// The provider bootstraps (internal/install/gitprovider) set Clone, so that
// the CLI pushes over HTTPS with the host's API token while the cluster
// syncs over SSH, and AuthorizeDeployKey, which adds the cluster's key
// through the host's API where bootstrap git would ask the user to.
//
// Running it again with the same options commits nothing, applies nothing
// and succeeds once the cluster is at HEAD.
package bootstrap
