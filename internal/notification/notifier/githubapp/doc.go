// Package githubapp authenticates to GitHub's REST API as a GitHub App
// installation, the way Flux's Provider types github, githubdispatch and
// githubpullrequestcomment do when their Secret holds App credentials
// instead of a token: githubAppID, githubAppInstallationID or
// githubAppInstallationOwner, githubAppPrivateKey and, for GitHub
// Enterprise Server, githubAppBaseURL.
//
// An App signs a short-lived RS256 JWT with its private key and trades it
// at POST {base}/app/installations/{id}/access_tokens for an installation
// token, which lasts an hour. The event server builds a Notifier for every
// delivery, so the tokens live in a Cache that outlives them (Default, one
// per process, as Flux keeps one token cache per controller): a token is
// asked for once and reused until shortly before it expires.
//
// The private key, the JWT and the tokens are credentials: errors of this
// package never show them, even when GitHub quotes the refused request.
package githubapp
