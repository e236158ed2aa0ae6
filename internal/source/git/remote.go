package git

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Client is what the GitRepository reconciler needs from Git. Tests and the
// reconciler's unit tests substitute their own.
type Client interface {
	// Remote returns a handle on one repository for the duration of ctx,
	// which carries the timeout (spec.timeout) of every operation made
	// through it. auth nil means anonymous HTTP(S).
	Remote(ctx context.Context, url string, auth *Auth) Remote
}

// Remote is one repository, reached with one set of credentials.
type Remote interface {
	// Resolve returns the revision ref points at now, from a single ref
	// advertisement (ls-remote): no objects are downloaded. When it equals
	// the stored artifact's revision the clone can be skipped.
	Resolve(ref Reference) (revision string, err error)
	// Clone checks ref out into dir, which must be empty or missing, and
	// returns the commit. Nothing is written outside dir.
	Clone(dir string, opts CloneOptions) (*Commit, error)
}

// CloneOptions says what to check out and how much of it.
type CloneOptions struct {
	// Reference to check out; the master branch when empty.
	Reference Reference
	// SparseCheckout limits the worktree to these directories (relative,
	// slash-separated). Empty means everything.
	SparseCheckout []string
	// RecurseSubmodules also checks out submodules, recursively.
	RecurseSubmodules bool
}

// maxSubmoduleDepth bounds submodule recursion, as git's default does.
const maxSubmoduleDepth = 10

// NewClient returns the go-git implementation of Client.
func NewClient() Client { return goGitClient{} }

type goGitClient struct{}

func (goGitClient) Remote(ctx context.Context, repoURL string, auth *Auth) Remote {
	r := &remote{ctx: ctx, auth: auth}
	if auth == nil {
		r.auth, r.err = NewAuth(repoURL, nil)
		return r
	}
	u, _, err := parseRepoURL(repoURL)
	switch {
	case err != nil:
		r.err = err
	case !auth.sameRepo(u):
		r.err = invalidf("credentials were read for %s, not %s", auth.describe(), u.Redacted())
	}
	return r
}

type remote struct {
	ctx  context.Context
	auth *Auth
	err  error // from Remote; returned by every method
}

// session is the per-operation transport state.
type session struct {
	proxy   transport.ProxyOptions
	release func()
}

func (r *remote) begin() (*session, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	s := &session{release: func() {}}
	if r.auth.scheme == schemeSSH {
		if r.auth.Proxy != nil && !r.auth.Proxy.isSOCKS() {
			return nil, invalidf("ssh connections can only use a socks5 proxy, not %s", r.auth.Proxy)
		}
		s.proxy, s.release = registerSSHDialer(r.ctx, r.auth.Proxy)
	} else {
		s.proxy = r.auth.Proxy.options()
	}
	return s, nil
}

// transportOptions are the go-git options for one repository URL: the
// Secret's credentials and client certificate only for the repository's
// own host, the CA for any HTTPS host.
type transportOptions struct {
	auth                  transport.AuthMethod
	caBundle              []byte
	clientCert, clientKey []byte
	proxy                 transport.ProxyOptions
}

func (r *remote) optionsFor(s *session, rawURL string) (transportOptions, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return transportOptions{}, invalidf("repository URL %q does not parse", redactURL(rawURL))
	}
	proto := strings.ToLower(ep.Protocol)
	switch proto {
	case "http", "https", "ssh":
	default:
		// file:// and local paths would read the controller's own disk.
		return transportOptions{}, invalidf("repository URL %q uses %q; only http, https and ssh are allowed", redactURL(rawURL), ep.Protocol)
	}
	main, _ := transport.NewEndpoint(r.auth.endpoint())
	sameHost := proto == strings.ToLower(main.Protocol) && strings.EqualFold(ep.Host, main.Host) && effectivePort(ep) == effectivePort(main)
	o := transportOptions{proxy: s.proxy}
	switch {
	case proto == "ssh" && r.auth.scheme != schemeSSH:
		return o, invalidf("ssh submodule %s of an %s repository: no ssh credentials", redactURL(rawURL), r.auth.scheme)
	case proto == "ssh":
		if !sameHost {
			return o, invalidf("ssh submodule on %s: ssh credentials are only used for %s", ep.Host, main.Host)
		}
		o.auth = r.auth.sshAuthMethod()
		return o, nil
	case r.auth.scheme == schemeSSH:
		// An http(s) submodule of an ssh repository: anonymous, through the
		// Secret's proxy if any (the session's is the SSH dialler).
		o.proxy = r.auth.Proxy.options()
		return o, nil
	}
	if proto == "https" {
		o.caBundle = r.auth.caBundle
	}
	if sameHost {
		o.auth = r.auth.httpAuth()
		o.clientCert, o.clientKey = r.auth.clientCert, r.auth.clientKey
	}
	return o, nil
}

func effectivePort(ep *transport.Endpoint) int {
	if ep.Port != 0 {
		return ep.Port
	}
	switch strings.ToLower(ep.Protocol) {
	case "ssh":
		return 22
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}

func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "<unparseable URL>"
}

// advertisement is a remote's references: direct hashes and, for
// annotated tags, the commit they peel to.
type advertisement struct {
	refs   map[plumbing.ReferenceName]plumbing.Hash
	peeled map[plumbing.ReferenceName]plumbing.Hash
}

// commitOf returns the commit name points at, peeling annotated tags.
func (a advertisement) commitOf(name plumbing.ReferenceName) (plumbing.Hash, bool) {
	if h, ok := a.peeled[name]; ok {
		return h, true
	}
	h, ok := a.refs[name]
	return h, ok
}

func (a advertisement) tags() []string {
	var tags []string
	for name := range a.refs {
		if name.IsTag() {
			tags = append(tags, name.Short())
		}
	}
	return tags
}

func (r *remote) list(s *session, display string) (advertisement, error) {
	o, err := r.optionsFor(s, r.auth.endpoint())
	if err != nil {
		return advertisement{}, err
	}
	rem := gogit.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{r.auth.endpoint()}})
	refs, err := rem.ListContext(r.ctx, &gogit.ListOptions{
		Auth:          o.auth,
		CABundle:      o.caBundle,
		ClientCert:    o.clientCert,
		ClientKey:     o.clientKey,
		ProxyOptions:  o.proxy,
		PeelingOption: gogit.AppendPeeled,
	})
	if err != nil {
		return advertisement{}, fmt.Errorf("list references: %w", refNotFound(r.ctx, err, display))
	}
	adv := advertisement{refs: map[plumbing.ReferenceName]plumbing.Hash{}, peeled: map[plumbing.ReferenceName]plumbing.Hash{}}
	for _, ref := range refs {
		if ref.Type() != plumbing.HashReference {
			continue
		}
		if name, ok := strings.CutSuffix(string(ref.Name()), peeledSuffix); ok {
			adv.peeled[plumbing.ReferenceName(name)] = ref.Hash()
			continue
		}
		adv.refs[ref.Name()] = ref.Hash()
	}
	return adv, nil
}

// pickSemVer chooses the tag for a semver reference from an advertisement.
func pickSemVer(adv advertisement, rr resolvedRef) (plumbing.ReferenceName, error) {
	tag := selectSemVer(adv.tags(), rr.constraint)
	if tag == "" {
		return "", &RefNotFoundError{Ref: rr.display, Reason: "no tag matches the constraint"}
	}
	return plumbing.NewTagReferenceName(tag), nil
}

func (r *remote) Resolve(ref Reference) (string, error) {
	rr, err := ref.resolve()
	if err != nil {
		return "", err
	}
	s, err := r.begin()
	if err != nil {
		return "", err
	}
	defer s.release()
	adv, err := r.list(s, rr.display)
	if err != nil {
		return "", err
	}
	name := rr.refName
	switch rr.kind {
	case kindCommit:
		// The advertisement only shows tips: it proves the remote and the
		// branch are there, not that the commit is. The revision follows
		// from the spec alone.
		if name != "" {
			if _, ok := adv.refs[name]; !ok {
				return "", &RefNotFoundError{Ref: string(name)}
			}
		}
		return revision(rr.kind, name, rr.commit), nil
	case kindSemVer:
		if name, err = pickSemVer(adv, rr); err != nil {
			return "", err
		}
	}
	hash, ok := adv.commitOf(name)
	if !ok {
		return "", &RefNotFoundError{Ref: string(name)}
	}
	return revision(rr.kind, name, hash.String()), nil
}

func (r *remote) Clone(dir string, opts CloneOptions) (*Commit, error) {
	rr, err := opts.Reference.resolve()
	if err != nil {
		return nil, err
	}
	sparse, err := sparseDirs(opts.SparseCheckout)
	if err != nil {
		return nil, err
	}
	s, err := r.begin()
	if err != nil {
		return nil, err
	}
	defer s.release()

	root, err := openEmptyDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	repo, err := initRepo(filepath.Join(dir, gogit.GitDirName), r.auth.endpoint())
	if err != nil {
		return nil, err
	}
	o, err := r.optionsFor(s, r.auth.endpoint())
	if err != nil {
		return nil, err
	}

	name, target, err := r.fetchTarget(s, repo, o, rr)
	if err != nil {
		return nil, err
	}

	c, tag, err := peel(repo, target)
	if err != nil {
		return nil, err
	}
	if err := setHead(repo, c.Hash); err != nil {
		return nil, err
	}
	if err := writeTree(root, repo.Storer, c, sparse); err != nil {
		return nil, err
	}
	if opts.RecurseSubmodules {
		if err := r.updateSubmodules(s, root, dir, c, r.auth.endpoint(), sparse, maxSubmoduleDepth); err != nil {
			return nil, err
		}
	}

	commit, err := buildCommit(c)
	if err != nil {
		return nil, err
	}
	commit.Reference = string(name)
	commit.Revision = revision(rr.kind, name, commit.Hash)
	if tag != nil && name.IsTag() {
		if commit.Tag, err = buildTag(tag, c.Hash); err != nil {
			return nil, err
		}
	}
	return commit, nil
}

// fetchTarget fetches what rr names into repo and returns the reference
// and the commit (or tag) it points at.
func (r *remote) fetchTarget(s *session, repo *gogit.Repository, o transportOptions, rr resolvedRef) (plumbing.ReferenceName, plumbing.Hash, error) {
	name := rr.refName
	switch rr.kind {
	case kindSemVer:
		adv, err := r.list(s, rr.display)
		if err != nil {
			return "", plumbing.ZeroHash, err
		}
		if name, err = pickSemVer(adv, rr); err != nil {
			return "", plumbing.ZeroHash, err
		}
		fallthrough
	case kindBranch, kindTag, kindName:
		if err := r.fetch(repo, o, []config.RefSpec{refSpec(name)}, 1, string(name)); err != nil {
			return "", plumbing.ZeroHash, err
		}
		ref, err := repo.Storer.Reference(name)
		if err != nil {
			return "", plumbing.ZeroHash, fmt.Errorf("read fetched reference %s: %w", name, err)
		}
		return name, ref.Hash(), nil
	case kindCommit:
		target := plumbing.NewHash(rr.commit)
		if err := r.fetchCommit(repo, o, target, name, rr.display); err != nil {
			return "", plumbing.ZeroHash, err
		}
		return name, target, nil
	}
	return name, plumbing.ZeroHash, nil
}

// openEmptyDir creates dir if needed and opens it as the root every
// worktree write goes through; it must be empty.
func openEmptyDir(dir string) (*os.Root, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return nil, invalidf("clone directory %s is not empty", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return root, nil
}

// refSpec fetches name to the same name locally.
func refSpec(name plumbing.ReferenceName) config.RefSpec {
	return config.RefSpec("+" + string(name) + ":" + string(name))
}

// initRepo creates an object store at gitDir (a directory named .git
// inside the checkout) with origin pointing at repoURL. The worktree is
// written by writeTree, not by go-git.
func initRepo(gitDir, repoURL string) (*gogit.Repository, error) {
	dot := osfs.New(gitDir, osfs.WithBoundOS())
	storer := filesystem.NewStorage(dot, cache.NewObjectLRUDefault())
	repo, err := gogit.Init(storer, nil)
	if err != nil {
		return nil, fmt.Errorf("initialise repository: %w", err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{repoURL}}); err != nil {
		return nil, fmt.Errorf("add remote: %w", err)
	}
	return repo, nil
}

func (r *remote) fetch(repo *gogit.Repository, o transportOptions, specs []config.RefSpec, depth int, display string) error {
	err := repo.FetchContext(r.ctx, &gogit.FetchOptions{
		RemoteName:   "origin",
		RefSpecs:     specs,
		Depth:        depth,
		Auth:         o.auth,
		Tags:         gogit.NoTags,
		Force:        true,
		CABundle:     o.caBundle,
		ClientCert:   o.clientCert,
		ClientKey:    o.clientKey,
		ProxyOptions: o.proxy,
	})
	if err == nil || errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return nil
	}
	return fmt.Errorf("fetch: %w", refNotFound(r.ctx, err, display))
}

// fetchCommit gets commit and enough history to check it out. On a branch
// that is the branch's history (the commit must be on it, as in Flux).
// Without one it first asks for the commit alone at depth 1, which servers
// allowing reachable SHA-1s in wants (GitHub, GitLab, git with protocol v2
// or uploadpack.allowReachableSHA1InWant) answer; otherwise it fetches every
// branch.
func (r *remote) fetchCommit(repo *gogit.Repository, o transportOptions, commit plumbing.Hash, branch plumbing.ReferenceName, display string) error {
	if branch != "" {
		if err := r.fetch(repo, o, []config.RefSpec{refSpec(branch)}, 0, string(branch)); err != nil {
			return err
		}
	} else {
		exact := config.RefSpec("+" + commit.String() + ":" + commit.String())
		err := r.fetch(repo, o, []config.RefSpec{exact}, 1, display)
		if err != nil && !errors.Is(err, gogit.ErrExactSHA1NotSupported) && !isRetryableExactFetch(err) {
			return err
		}
		if err != nil || !hasCommit(repo, commit) {
			if err := r.fetch(repo, o, []config.RefSpec{"+refs/heads/*:refs/heads/*"}, 0, display); err != nil {
				return err
			}
		}
	}
	if !hasCommit(repo, commit) {
		return &RefNotFoundError{Ref: display, Reason: "commit is not reachable from the fetched references"}
	}
	return nil
}

// isRetryableExactFetch reports whether a failed exact-SHA fetch is worth
// retrying as a full fetch: the server rejected the want (tip-only
// servers answer "not our ref"), not the connection or credentials.
func isRetryableExactFetch(err error) bool {
	for _, s := range []error{ErrAuth, ErrHostKey, ErrTLS, ErrUnreachable, ErrRepositoryNotFound, ErrInvalidConfig} {
		if errors.Is(err, s) {
			return false
		}
	}
	return true
}

func hasCommit(repo *gogit.Repository, h plumbing.Hash) bool {
	_, err := repo.CommitObject(h)
	return err == nil
}

// peel follows annotated tags from h to a commit, returning the outermost
// tag on the way.
func peel(repo *gogit.Repository, h plumbing.Hash) (*object.Commit, *object.Tag, error) {
	var first *object.Tag
	for range 10 {
		obj, err := repo.Object(plumbing.AnyObject, h)
		if err != nil {
			return nil, nil, fmt.Errorf("read object %s: %w", h, err)
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o, first, nil
		case *object.Tag:
			if first == nil {
				first = o
			}
			h = o.Target
		default:
			return nil, nil, invalidf("reference points at a %s, not a commit", obj.Type())
		}
	}
	return nil, nil, invalidf("tag chain at %s is too long", h)
}

// sparseDirs cleans the sparse checkout directories into path prefixes,
// each with a trailing slash so that "deploy" does not take "deployment/"
// (go-git's own SparseCheckoutDirectories matches the bare string prefix).
func sparseDirs(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		clean := path.Clean(strings.TrimSpace(d))
		clean = strings.TrimPrefix(clean, "./")
		if clean == "." || clean == "/" || clean == "" {
			return nil, nil // the whole tree
		}
		if strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, invalidf("sparse checkout directory %q is not a relative path inside the repository", d)
		}
		out = append(out, clean+"/")
	}
	return out, nil
}

// updateSubmodules checks out the submodules c records (inside the sparse
// directories, if any) under root, which holds c's worktree at dir,
// recursing depth levels. go-git's Submodule.Update needs a go-git worktree
// and takes no CA, client certificate, proxy or context-bound SSH dialler,
// so this does the same work with the session's transport options and
// credentials scoped to the repository's host.
func (r *remote) updateSubmodules(s *session, root *os.Root, dir string, c *object.Commit, parentURL string, sparse []string, depth int) error {
	if depth == 0 {
		return nil
	}
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("read tree of %s: %w", c.Hash, err)
	}
	f, err := tree.File(".gitmodules")
	if errors.Is(err, object.ErrFileNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read .gitmodules: %w", err)
	}
	content, err := f.Contents()
	if err != nil {
		return fmt.Errorf("read .gitmodules: %w", err)
	}
	modules := config.NewModules()
	if err := modules.Unmarshal([]byte(content)); err != nil {
		return fmt.Errorf("parse .gitmodules: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(modules.Submodules)) {
		m := modules.Submodules[name]
		p := path.Clean(m.Path)
		if err := validTreePath(p); err != nil {
			return fmt.Errorf("submodule %q: %w", name, err)
		}
		if !inSparse(p+"/", sparse) {
			continue
		}
		e, err := tree.FindEntry(p)
		if err != nil || e.Mode != filemode.Submodule {
			continue // in .gitmodules but not recorded in the tree
		}
		if err := r.updateSubmodule(s, root, dir, p, m.URL, parentURL, e.Hash, depth); err != nil {
			return fmt.Errorf("submodule %q: %w", p, err)
		}
	}
	return nil
}

func (r *remote) updateSubmodule(s *session, root *os.Root, dir, p, rawURL, parentURL string, commit plumbing.Hash, depth int) error {
	subURL, err := resolveSubmoduleURL(parentURL, rawURL)
	if err != nil {
		return err
	}
	o, err := r.optionsFor(s, subURL)
	if err != nil {
		return err
	}
	subRoot, err := root.OpenRoot(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer subRoot.Close()
	subDir := filepath.Join(dir, filepath.FromSlash(p))
	repo, err := initRepo(filepath.Join(subDir, gogit.GitDirName), subURL)
	if err != nil {
		return err
	}
	if err := r.fetchCommit(repo, o, commit, "", "commit "+commit.String()); err != nil {
		return err
	}
	c, err := repo.CommitObject(commit)
	if err != nil {
		return fmt.Errorf("read commit %s: %w", commit, err)
	}
	if err := setHead(repo, c.Hash); err != nil {
		return err
	}
	if err := writeTree(subRoot, repo.Storer, c, nil); err != nil {
		return err
	}
	return r.updateSubmodules(s, subRoot, subDir, c, subURL, nil, depth-1)
}

// resolveSubmoduleURL resolves a .gitmodules URL: "./x" and "../x" are
// relative to the superproject's URL, as git resolves them.
func resolveSubmoduleURL(parentURL, raw string) (string, error) {
	if !strings.HasPrefix(raw, "./") && !strings.HasPrefix(raw, "../") {
		return raw, nil
	}
	ep, err := transport.NewEndpoint(parentURL)
	if err != nil {
		return "", invalidf("superproject URL %q does not parse", redactURL(parentURL))
	}
	ep.Path = path.Join(ep.Path, raw)
	return ep.String(), nil
}

func setHead(repo *gogit.Repository, h plumbing.Hash) error {
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, h)); err != nil {
		return fmt.Errorf("set HEAD: %w", err)
	}
	return nil
}
