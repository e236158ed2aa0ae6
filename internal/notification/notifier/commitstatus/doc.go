// Package commitstatus sets commit statuses on the Git hosts Flux's
// Provider types name: github, gitlab, gitea, bitbucket, bitbucketserver
// and azuredevops. One file per host; what they share is here: the commit
// taken from the event's revision, the outcome taken from its severity, the
// description taken from its reason, the status key and the repository
// taken from the Provider's address.
//
// As Flux does, each host marks the commit "succeeded" for info events and
// "failed" for error events, and skips Progressing events: a status says
// how a reconciliation ended. GitHub, GitLab, Gitea, Bitbucket, Bitbucket
// Server and Azure DevOps are first asked for the status already set under
// the same key, and a status with the same state and description is not
// posted again.
package commitstatus
