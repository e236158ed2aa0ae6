package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// PushOptions says where PushWith sends the checked-out branch.
type PushOptions struct {
	// Branch is the remote branch to update; the checkout's own branch when
	// empty. A different branch is created from the checkout's tip.
	Branch string
	// Refspec, when set, is pushed too, after Branch: "<src>:<dst>", where
	// src may name Branch (refs/heads/<Branch>) or HEAD. Force ("+") and
	// deletion (empty src) refspecs are refused.
	Refspec string
	// Force overwrites Branch whatever it holds (never the refspec's
	// destination): the image automation's GitForcePushBranch, for a push
	// branch that only the automation writes.
	Force bool
	// Options are git push options (git push -o key=value).
	Options map[string]string
}

// Revision is the checkout's revision in Flux's form, <branch>@sha1:<hex>;
// empty for an empty Checkout.
func (c *Checkout) Revision() string {
	h := c.Head()
	if h == "" {
		return ""
	}
	return c.branch.Short() + "@sha1:" + h
}

// Branch is the short name of the checked-out branch.
func (c *Checkout) Branch() string { return c.branch.Short() }

// ResolveDir resolves dir (slash-separated, relative to the repository
// root; "" is the root) inside the worktree, following symlinks as the
// kernel would but never out of the repository: a link pointing above the
// root stops at the root (filepath-securejoin's rule). It returns the
// clean relative path, "." for the root.
func (c *Checkout) ResolveDir(dir string) (string, error) {
	joined, err := securejoin.SecureJoinVFS("/", dir, c.wt.Filesystem)
	if err != nil {
		return "", fmt.Errorf("resolve %q in the repository: %w", dir, err)
	}
	rel := strings.TrimPrefix(path.Clean(joined), "/")
	if rel == "" {
		return ".", nil
	}
	return rel, nil
}

// Files returns the regular files below dir (as ResolveDir returns it),
// recursively, as sorted slash-separated paths relative to the repository
// root. Symlinks are neither followed nor listed, and .git directories are
// skipped, so every path names a file inside the repository. A missing dir
// gives none.
func (c *Checkout) Files(dir string) ([]string, error) {
	var out []string
	if err := c.walk(path.Clean(dir), &out); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

func (c *Checkout) walk(dir string, out *[]string) error {
	entries, err := c.wt.Filesystem.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		switch {
		case e.IsDir() && strings.EqualFold(e.Name(), ".git"):
		case e.IsDir():
			if err := c.walk(p, out); err != nil {
				return err
			}
		case e.Mode().IsRegular():
			*out = append(*out, p)
		}
	}
	return nil
}

// PushWith sends the branch as o asks. It returns an error matching
// ErrNonFastForward when o.Branch moved since the checkout (or appeared,
// when it was to be created) and Force is off; nothing on the remote
// changes then. ctx bounds the push.
func (c *Checkout) PushWith(ctx context.Context, o PushOptions) error {
	if c.Head() == "" {
		return invalidf("nothing to push: branch %s has no commit", c.branch.Short())
	}
	dst, err := c.pushBranch(o.Branch)
	if err != nil {
		return err
	}
	spec := config.RefSpec(string(dst) + ":" + string(dst))
	if o.Force {
		spec = "+" + spec
	}
	if err := c.push(ctx, []config.RefSpec{spec}, o.Options); err != nil {
		return fmt.Errorf("push %s to %s: %w", dst.Short(), c.auth.describe(), err)
	}
	if o.Refspec == "" {
		return nil
	}
	rs, err := parseRefspec(o.Refspec)
	if err != nil {
		return err
	}
	if err := c.push(ctx, []config.RefSpec{rs}, o.Options); err != nil {
		return fmt.Errorf("push refspec '%s' to %s: %w", o.Refspec, c.auth.describe(), err)
	}
	return nil
}

// pushBranch returns the local reference to push as branch, creating it
// at the tip when it is not the checked-out branch.
func (c *Checkout) pushBranch(branch string) (plumbing.ReferenceName, error) {
	if branch == "" || branch == c.branch.Short() {
		return c.branch, nil
	}
	name := plumbing.NewBranchReferenceName(branch)
	if strings.HasPrefix(branch, "refs/") || name.Validate() != nil {
		return "", invalidf("push branch name %q is not valid", branch)
	}
	ref := plumbing.NewHashReference(name, plumbing.NewHash(c.Head()))
	if err := c.repo.Storer.SetReference(ref); err != nil {
		return "", fmt.Errorf("create local branch %s: %w", branch, err)
	}
	return name, nil
}

// parseRefspec accepts "<src>:<dst>" with both sides set and no force.
func parseRefspec(s string) (config.RefSpec, error) {
	rs := config.RefSpec(s)
	if strings.HasPrefix(s, "+") {
		return "", invalidf("refspec '%s': force-update refspecs are not supported", s)
	}
	if err := rs.Validate(); err != nil || !strings.Contains(s, ":") {
		return "", invalidf("refspec '%s' is not valid", s)
	}
	if strings.HasPrefix(s, ":") {
		return "", invalidf("refspec '%s': deletion refspecs are not supported", s)
	}
	return rs, nil
}

// push sends specs to origin with the checkout's credentials.
func (c *Checkout) push(ctx context.Context, specs []config.RefSpec, options map[string]string) error {
	r := &remote{ctx: ctx, auth: c.auth}
	s, err := r.begin()
	if err != nil {
		return err
	}
	defer s.release()
	o, err := r.optionsFor(s, r.auth.endpoint())
	if err != nil {
		return err
	}
	err = c.repo.PushContext(ctx, &gogit.PushOptions{
		RemoteName:   "origin",
		RefSpecs:     specs,
		Auth:         o.auth,
		CABundle:     o.caBundle,
		ClientCert:   o.clientCert,
		ClientKey:    o.clientKey,
		ProxyOptions: o.proxy,
		Options:      options,
	})
	switch {
	case err == nil, errors.Is(err, gogit.NoErrAlreadyUpToDate):
		return nil
	case isNonFastForward(err):
		return fmt.Errorf("%w: %w", ErrNonFastForward, err)
	}
	return classify(ctx, err)
}
