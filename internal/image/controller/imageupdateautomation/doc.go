// Package imageupdateautomation reconciles ImageUpdateAutomations: it
// checks out the branch of the GitRepository an automation names, writes
// the images its ImagePolicies elected into the setter markers below
// spec.update.path (internal/image/setters), commits with the message template
// and optional signature, pushes, and asks the GitRepository to fetch at
// once so the cluster follows without waiting for its interval.
//
// A run is skipped, without a clone, when the policies' images are those
// the last run saw and the branch still points at the commit it saw (one
// ref advertisement tells), as in Flux; a separate push branch or refspec
// always runs in full. Nothing is committed when nothing changed. A push
// refused because the branch moved meanwhile is redone once on a fresh
// checkout; a second refusal fails the run, which is retried with backoff.
//
// The checkout lives in memory (internal/source/git's Checkout): no temporary
// directory, no credentials on disk, and the update path, resolved with
// filepath-securejoin's rule over the in-memory tree, cannot reach outside
// the repository. Only branch checkouts are supported: a checkout ref (or
// GitRepository ref) naming a tag, semver range, commit or full reference
// stalls the automation with InvalidSourceConfiguration.
//
// ImagePolicies are watched: a policy whose latest image changes triggers
// the automations of its namespace whose policySelector selects it, so a
// new tag reaches Git at once rather than at the next interval.
package imageupdateautomation
