// Package gitserve serves a directory of bare Git repositories over smart
// HTTP by handing each request to the system's `git http-backend` (CGI). It
// is what `weir dev` serves its example fleet with, and what the test Git
// server (internal/devenv/testenv/gitserver) wraps with authentication.
//
// Real Git answers, so clients (weir's go-git fetches, a person's git push)
// meet the protocol as production servers speak it. Every git process runs
// with a HOME of its own and no global or system configuration, so nothing
// of the user's Git setup leaks into what is served.
//
// Push notifications: OnPush is called after each completed push, which is
// how `weir dev` asks its GitRepository to fetch at once, as a Flux Receiver
// would on a webhook.
package gitserve
