package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/install"
	"github.com/weir-gitops/weir/internal/source/git"
	"github.com/weir-gitops/weir/internal/version"
)

// cloneBackoff is the pause before the one retry of a failed clone.
var cloneBackoff = 2 * time.Second

// Result is what a bootstrap did.
type Result struct {
	// Revision is <branch>@sha1:<HEAD>, what the cluster now runs.
	Revision string
	// Committed reports that a commit was pushed.
	Committed bool
	// Installed reports that the components were applied by the CLI (the
	// first bootstrap of a cluster).
	Installed bool
	// DeployKey is the generated SSH public key the Git host must accept,
	// empty when none was generated.
	DeployKey string
}

// runner carries one bootstrap's state from step to step.
type runner struct {
	o       Options
	kube    client.Client
	log     Logger
	confirm Confirm

	auth       *git.Auth // the CLI's own credentials for clone and push
	knownHosts []byte    // SSH host keys of the host the cluster fetches from, for the source Secret
	secret     *secretState

	checkout *git.Checkout
	built    []*unstructured.Unstructured // kustomize build of <path>/flux-system
	// syncChanged reports that the pushed commit changed gotk-sync.yaml.
	syncChanged bool
	// secretChanged reports that the source Secret was written.
	secretChanged bool
	// pendingSecret is the source Secret's data once a move is complete,
	// nil when the Secret already holds it (see reconcileSourceSecret).
	pendingSecret map[string][]byte
	// requested is the reconcile request token set on the sync objects,
	// empty when none was set.
	requested string
	result    Result
}

// Run bootstraps the cluster kube points at from the repository of o; see
// the package documentation for the steps.
func Run(ctx context.Context, kube client.Client, log Logger, confirm Confirm, o Options) (*Result, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	r := &runner{o: o, kube: kube, log: log, confirm: confirm}
	defer r.close()
	steps := []func(context.Context) error{
		r.readSourceSecret,
		r.connect,
		r.reconcileRepository,
		r.reconcileCluster,
		r.waitSynced,
		r.finishMove,
		r.waitComponents,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	return &r.result, nil
}

// close releases the CLI's Git credentials (an agent connection).
func (r *runner) close() {
	if r.auth != nil {
		_ = r.auth.Close()
	}
}

// reconcileRepository clones the branch, writes weir's files, commits and
// pushes; a push refused because the branch moved is redone once on a
// fresh clone.
func (r *runner) reconcileRepository(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := r.commitAndPush(ctx)
		if errors.Is(err, git.ErrNonFastForward) && attempt == 0 {
			r.log.Warningf("branch %q moved during bootstrap, cloning it again", r.o.Branch)
			continue
		}
		return err
	}
}

func (r *runner) commitAndPush(ctx context.Context) error {
	if err := r.clone(ctx); err != nil {
		return err
	}
	r.log.Generatef("generating component manifests")
	if err := r.writeManifests(); err != nil {
		return err
	}
	r.log.Successf("generated component manifests")
	// Build before committing: a kustomization.yaml the user broke fails
	// here, with nothing pushed.
	if err := r.build(ctx); err != nil {
		return err
	}
	hash, err := r.checkout.Commit(r.commitMessage(), r.o.Author, r.o.Signer)
	switch {
	case errors.Is(err, git.ErrNoStagedFiles):
		r.log.Successf("component manifests are up to date")
		r.result.Revision = r.revision(r.checkout.Head())
		return nil
	case err != nil:
		return fmt.Errorf("failed to commit manifests: %w", err)
	}
	r.log.Successf("committed component manifests to %q (%q)", r.o.Branch, hash)
	r.log.Actionf("pushing component manifests to %q", redacted(r.o.cloneURL()))
	if err := r.checkout.Push(ctx); err != nil {
		return fmt.Errorf("failed to push manifests: %w", err)
	}
	r.result.Committed = true
	r.result.Revision = r.revision(hash)
	return nil
}

// clone opens the branch, retrying once after cloneBackoff.
func (r *runner) clone(ctx context.Context) error {
	r.log.Actionf("cloning branch %q from Git repository %q", r.o.Branch, redacted(r.o.cloneURL()))
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if attempt > 0 {
			r.log.Warningf("clone failed, retrying in %s: %v", cloneBackoff, err)
			select {
			case <-ctx.Done():
				return fmt.Errorf("failed to clone repository: %w", err)
			case <-time.After(cloneBackoff):
			}
		}
		r.checkout, err = git.OpenBranch(ctx, r.o.cloneURL(), r.auth, r.o.Branch)
		if err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("failed to clone repository: %w", err)
	}
	if r.checkout.Head() == "" {
		r.log.Successf("branch %q does not exist yet: bootstrap starts it", r.o.Branch)
	} else {
		r.log.Successf("cloned repository")
	}
	return nil
}

// writeManifests writes gotk-components.yaml and gotk-sync.yaml, and
// kustomization.yaml when the directory has none.
func (r *runner) writeManifests() error {
	dir := r.o.systemDir()
	components, err := componentsManifest(r.o.Components)
	if err != nil {
		return err
	}
	sync, err := syncManifest(&r.o, true)
	if err != nil {
		return err
	}
	old, _ := r.checkout.ReadFile(dir + "/" + SyncFile)
	r.syncChanged = !bytes.Equal(old, sync)
	for name, data := range map[string][]byte{ComponentsFile: components, SyncFile: sync} {
		if err := r.checkout.WriteFile(dir+"/"+name, data); err != nil {
			return err
		}
	}
	kfile := dir + "/" + KustomizationFile
	if _, err := r.checkout.ReadFile(kfile); err == nil {
		return nil // the user's, with their patches
	}
	files, err := r.checkout.ListDir(dir)
	if err != nil {
		return err
	}
	return r.checkout.WriteFile(kfile, kustomizationManifest(files))
}

func (r *runner) commitMessage() string {
	msg := fmt.Sprintf("Add weir %s component and sync manifests", version.Version)
	if r.o.CommitMessageAppendix != "" {
		msg += "\n\n" + r.o.CommitMessageAppendix
	}
	return msg
}

// revision is the artifact revision of commit hash on the branch.
func (r *runner) revision(hash string) string { return r.o.Branch + "@sha1:" + hash }

// reconcileCluster installs the components the first time, makes sure
// the source Secret is there, then applies the sync objects the first
// time or asks them to pick up a new commit.
func (r *runner) reconcileCluster(ctx context.Context) error {
	first, err := mustInstall(ctx, r.kube, r.o.Components.Namespace)
	if err != nil {
		return err
	}
	components, sync := splitSync(r.built)
	if first {
		r.log.Actionf("installing components in %q namespace", r.o.Components.Namespace)
		if err := install.Apply(ctx, r.kube, components, install.ApplyOptions{Timeout: r.o.Timeout, Poll: r.o.Poll}); err != nil {
			return fmt.Errorf("installing components: %w", err)
		}
		r.log.Successf("installed components")
		r.result.Installed = true
	}
	r.log.Successf("reconciled components")
	if err := r.reconcilePullSecret(ctx); err != nil {
		return err
	}
	moving := !first && r.result.Committed && r.syncChanged
	if err := r.reconcileSourceSecret(ctx, moving); err != nil {
		return err
	}
	if first || moving {
		// The first time, and when the repository moved (new URL, branch,
		// interval…): the cluster cannot learn its new address from the
		// old one.
		r.log.Actionf("applying sync manifests")
		if err := install.Apply(ctx, r.kube, sync, install.ApplyOptions{Timeout: r.o.Timeout, Poll: r.o.Poll}); err != nil {
			return fmt.Errorf("applying sync manifests: %w", err)
		}
	}
	if !first && (r.result.Committed || r.secretChanged) {
		// The cluster must fetch the new commit, or fetch again with the
		// new credentials, before the wait can tell anything.
		r.requested = time.Now().Format(time.RFC3339Nano)
		if err := requestReconcile(ctx, r.kube, r.o.Components.Namespace, r.requested); err != nil {
			return err
		}
	}
	r.log.Successf("reconciled sync configuration")
	return nil
}
