// Package gitserver owns the Git servers that weir's tests talk to: smart
// HTTP(S) through the system's `git http-backend`, and SSH through
// golang.org/x/crypto/ssh running `git-upload-pack` and `git-receive-pack`.
// Both serve the same temporary directory of bare repositories on 127.0.0.1
// and stop when the test ends.
//
// The server side is real Git so that weir's client code (go-git) meets the
// protocol as production servers speak it, not as a second Go implementation
// would. The helpers that write commits use go-git with a fixed author and
// date, never the user's Git configuration, so the same commits give the same
// SHAs on every machine.
//
// Usage:
//
//	key := gitserver.GenerateClientKey(t)
//	srv := gitserver.New(t, gitserver.Options{
//		Username:       "git",
//		Password:       "s3cret",
//		AuthorizedKeys: []ssh.PublicKey{key.PublicKey},
//	})
//	srv.InitRepo(t, "org/app.git")
//	sha := srv.Commit(t, "org/app.git", gitserver.Commit{
//		Files: map[string]string{"deploy/app.yaml": "kind: ConfigMap\n"},
//		Tag:   "v1.0.0",
//	})
//	// Point a GitRepository at srv.HTTPURL("org/app.git") with basic auth, or at
//	// srv.SSHURL("org/app.git") with key.PrivateKeyPEM and srv.KnownHosts().
package gitserver
