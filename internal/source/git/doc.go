// Package git owns everything the GitRepository reconciler asks of Git:
// reading credentials from Secrets, resolving a reference to a revision
// without downloading anything, cloning a reference into a directory, and
// verifying PGP and SSH signatures of commits and tags. The reconciler sees
// the small Client/Remote interface; go-git v5 is the implementation. For
// `weir bootstrap git` it also writes: a branch checked out in memory,
// committed (optionally signed) and pushed, plus the CLI-only pieces that
// go with it, SSH agent authentication and host key scanning. For `weir
// diff --base` it reads a local repository at a revision (LocalRepository:
// git's revision syntax, the tree written to a scratch directory, the work
// tree left alone).
//
// # Revisions
//
// Revision strings are Flux's, byte for byte:
//
//	branch main                 main@sha1:<40 hex>
//	branch feature/x            feature/x@sha1:<hex>
//	tag v1.2.3 (annotated too)  v1.2.3@sha1:<hex of the commit, peeled>
//	semver ">=1.0.0"            <chosen tag>@sha1:<hex>
//	name refs/pull/1/head       refs/pull/1/head@sha1:<hex>
//	name refs/heads/main        refs/heads/main@sha1:<hex>   (name refs keep the full name)
//	commit only                 sha1:<hex>
//	branch main + commit        main@sha1:<commit>
//
// Branch, tag and semver revisions drop the first two path elements of the
// reference (refs/heads/, refs/tags/); spec.ref.name revisions are the
// absolute reference, whatever its prefix (source-controller's
// commitReference uses the absolute form whenever ref.name is set).
//
// # The no-op check
//
// Remote.Resolve makes one ref advertisement (ls-remote: one GET of
// info/refs over HTTP, one upload-pack session closed after the
// advertisement over SSH) and downloads no objects. Annotated tags resolve
// to the commit they peel to, from the advertisement's "^{}" lines. Semver
// lists the advertised tags and picks the highest match; when v1.2.3 and
// 1.2.3 both match it picks the greater name (Flux breaks that tie by tag
// date, which needs the objects). For commit references the revision
// follows from the spec alone (sha1:<commit>, or <branch>@sha1:<commit>):
// the advertisement only shows tips, so Resolve proves the remote (and
// branch) are reachable but not that the commit exists; only Clone can.
// A server that does not advertise peeled tags makes an annotated tag
// resolve to the tag object's hash, which never equals the stored revision:
// the reconciler then clones every time, which is slower, not wrong.
//
// # Clone
//
// Clone fetches exactly the reference asked for, at depth 1, into an object
// store at <dir>/.git, then writes the commit's tree into dir itself.
// Semver does one ls-remote to choose the tag, then fetches that tag. A
// commit on a branch fetches the branch's history (the commit must be
// reachable from it, as in Flux); a commit alone is first asked for
// directly at depth 1, which servers allowing reachable SHA-1s in wants
// answer (GitHub, GitLab, git with uploadpack.allowReachableSHA1InWant),
// and otherwise fetched with every branch.
//
// The worktree is written here rather than by go-git's Worktree.Checkout,
// which builds an index and validates every path with several lstat and
// EvalSymlinks calls (90% of a 5,000-file clone). Every write goes through
// an os.Root opened on dir, so the kernel refuses any path that would
// resolve outside it; the directory must be empty; tree paths git itself
// refuses (".git" in any case, "..", backslashes) are refused. Symlinks are
// written as symlinks whatever their target: nothing is written through
// them, and the archiver decides what to do with them. Sparse checkout
// filters the tree by directory prefix while writing (a directory missing
// from the tree is ErrPathNotFound). go-git v5.19 offers sparse checkout
// only as CheckoutOptions.SparseCheckoutDirectories (CloneOptions has no
// such field) and matches index entries by bare string prefix, so "deploy"
// would also take "deployment/"; here each directory is matched with a
// trailing slash. A depth-1 fetch still downloads every blob of the commit:
// go-git v5 cannot ask for a partial clone.
//
// Submodules are fetched and written here as well, since go-git's
// submodule update needs its worktree and takes no CA, client certificate,
// proxy or context-bound SSH dialler. Relative URLs resolve against the
// superproject's URL as git resolves them. The Secret's credentials go only
// to submodules on the repository's own host (scheme, host and port equal);
// HTTP(S) submodules elsewhere are fetched anonymously, SSH submodules
// elsewhere and file or local URLs are refused. Each submodule keeps its
// objects in <path>/.git.
//
// # SSH
//
// The host key is always checked against the Secret's known_hosts, matched
// in memory (plain, [host]:port, hashed and wildcard entries; @revoked
// honoured; @cert-authority ignored). Importing this package sets go-git's
// DefaultSSHConfig to nil, so ~/.ssh/config cannot redirect a connection,
// and makes its DefaultAuthBuilder fail, so no SSH agent is ever asked
// unless the CLI names one: NewAgentAuth takes the agent's socket as an
// argument (the package never reads SSH_AUTH_SOCK) and holds one
// connection to it until Auth.Close. ScanHostKey records what a server
// presents, cutting each handshake off in the host key callback, so that
// the CLI can show the keys and store them as known_hosts (trust on first
// use); from then on the key is checked like any other.
// go-git dials SSH without the caller's context and with no deadline on the
// handshake; this package registers a golang.org/x/net/proxy dialer scheme
// and hands go-git a per-operation proxy URL of that scheme, so that every
// SSH connection is dialled with the operation's context (and through the
// SOCKS5 proxy, if any) and closed when the context ends.
//
// # Writing
//
// OpenBranch fetches one branch, its whole history and no tags, into a
// go-git memory store and a memfs worktree; Commit stages what WriteFile
// changed and commits it on that branch; Push sends it. Nothing goes to
// disk: bootstrap writes a few manifests, and a temporary clone would only
// add cleanup, leftovers after a crash, and credentials in a .git/config.
// The full history (not depth 1) is what go-git needs to prove, before
// sending anything, that the push is a fast-forward, and what lets the new
// commit have the tip as its parent. An empty repository, or one without
// the branch, gives an empty Checkout whose first commit is a root commit.
//
// Push never forces. If the branch moved since OpenBranch (someone pushed,
// or created a branch an empty Checkout expected to create), the push is
// refused with ErrNonFastForward and nothing on the remote changes; the
// caller opens the branch again and reapplies its change. Force would
// silently drop other people's commits on a branch the cluster syncs
// from. PushWith, for the image automation, can send the branch to another
// remote branch (created from the tip), force only that one when asked
// (Flux's GitForcePushBranch, for a branch only the automation writes),
// push a refspec after it (never forced; "+" and deletion refspecs are
// refused) and send git push options. Files lists the regular files below
// a directory and ResolveDir resolves a directory through symlinks with
// filepath-securejoin's rule, so that nothing outside the repository is
// ever named. Commit returns ErrNoStagedFiles when the tree is unchanged, which
// bootstrap reports as "up to date". Paths are slash-separated and
// relative to the repository root; absolute paths, ".." escapes and .git
// are refused. Commit stages exactly the files WriteFile wrote, even those
// .gitignore matches (go-git's "add all" would drop them silently).
//
// Commits can be signed through the Signer interface (the shape of
// go-git's CommitOptions.Signer): NewPGPSigner makes armored detached
// OpenPGP signatures, NewSSHSigner OpenSSH SSHSIG signatures (namespace
// git, sha512), the formats `git commit -S` writes and VerifyCommit reads.
//
// # Verification
//
// VerifyCommit and VerifyTag accept exactly one armored signature, PGP
// (keys from *.asc Secret entries, checked with ProtonMail/go-crypto) or
// SSH (keys from *.sshpub entries in authorized_keys format). SSH
// signatures are OpenSSH "sshsig" blobs, verified here for namespace "git"
// with sha256 or sha512, as `ssh-keygen -Y verify` would (go-git v5.19 can
// create SSH-signed commits through CommitOptions.Signer but cannot verify
// them).
//
// # Errors
//
// Failures match one of ErrInvalidConfig, ErrAuth, ErrHostKey, ErrTLS,
// ErrUnreachable, ErrRepositoryNotFound, ErrRefNotFound, ErrPathNotFound
// or ErrVerification with errors.Is, so the reconciler can pick a condition
// reason and decide whether to retry. Messages are lower-case and never
// contain secret values.
package git
