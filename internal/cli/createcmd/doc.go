// Package createcmd implements `weir create`: generate a Flux object from
// flags (source git|helm|chart|oci|bucket, kustomization, receiver, alert-provider,
// alert, secret git|oci|tls|receiver|githubapp|helm|notation|proxy,
// tenant), print it with --export, or
// apply it and wait for the controller (or, for the static Alert and
// Provider, for the API server to hold it), with the flux CLI's flags,
// defaults and progress lines.
//
// Differences from the flux CLI, on purpose:
//   - objects are applied with server-side apply (field manager "flux", the
//     name the flux CLI's own writes carry), so re-running create updates
//     what it set and leaves other managers' fields alone;
//   - weir never scans an SSH host for its key: known_hosts comes from
//     --known-hosts-file or is left out (with a warning);
//   - --source of `create kustomization` also takes Kind/namespace/name,
//     the form `get -o wide` prints;
//   - --health-check writes the apiVersion of Deployment, DaemonSet and
//     StatefulSet (apps/v1) where flux leaves it out; the controllers read
//     a missing apiVersion as apps/v1 too, so both forms check the same
//     object;
//   - --resource of `create receiver` also takes Kind/name.namespace, sets
//     each resource's apiVersion from its kind and refuses a kind the
//     Receiver API does not know; --type is checked against the Receiver
//     types, and an explicit --interval is written (flux leaves it out);
//   - --event-source of `create alert` is parsed the same way and refuses a
//     kind the Alert API does not know, --event-severity is checked against
//     info and error, and --type of `create alert-provider` against the
//     Provider types, so that --export catches what the API server would
//     reject (flux leaves those checks to the API server); a commit-status
//     type (github, gitlab, gitea, bitbucket, bitbucketserver, azuredevops)
//     also needs --secret-ref and an --address the event server can read a
//     repository from, checked by the event server's own parser;
//   - `create source chart` reads --verify-subject for its own check that a
//     subject needs a --verify-provider (flux reads the OCIRepository's flag
//     there);
//   - `create secret proxy` leaves the address out of its error when the
//     address does not parse, since it may carry a password;
//   - `create secret notation` checks the trust policy with weir's own
//     reading of Notation's rules (Notation's Go module is not imported),
//     so its messages may differ in wording from flux's.
package createcmd
