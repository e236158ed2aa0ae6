// Package gitcomment tells a Git host about an event as Flux's
// change-request and dispatch Provider types do: githubdispatch fires a
// repository_dispatch event (POST /repos/{owner}/{repo}/dispatches, the
// event type "<Kind>/<name>.<namespace>", the event itself as the client
// payload) for a GitHub Actions workflow to act on; githubpullrequestcomment,
// gitlabmergerequestcomment and giteapullrequestcomment keep one comment per
// object on the pull or merge request the event names in its
// change_request metadata.
//
// A comment carries a hidden marker, "<!-- flux-pr-comment-key:KEY -->"
// ("flux-mr-comment-key" on GitLab) where KEY is the Provider's UID and the
// object's kind, namespace and name. The first 100 comments of the request,
// oldest first, are read; the one written by the same user (a GitHub App
// writes as "<slug>[bot]") with the object's marker is edited, otherwise a
// new one is posted. Events that end a reconciliation for commit statuses
// (commit_status: update) are not for these types, as in Flux.
//
// Repository addresses and clients are githost's, the ones the
// commit-status types use, so a GitHub App or an Enterprise host works
// here as there.
package gitcomment
