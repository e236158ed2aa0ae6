package imageupdateautomation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/image/setters"
	"github.com/weir-gitops/weir/internal/source/git"
)

// pushAttempts is how many times a run pushes: once, and once more on a
// fresh checkout when the branch moved meanwhile.
const pushAttempts = 2

// update checks out, applies the setters, and commits and pushes what
// changed; a push that loses a race is redone once from a new checkout.
func (r *Reconciler) update(ctx context.Context, obj *imagev1.ImageUpdateAutomation, src *gitSource, values setters.Values, out *outcome) error {
	ctx, cancel := context.WithTimeout(ctx, src.timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		err := r.attempt(ctx, obj, src, values, out, attempt)
		if !errors.Is(err, git.ErrNonFastForward) || attempt+1 >= pushAttempts {
			return err
		}
	}
}

// attempt is one checkout-update-commit-push round.
func (r *Reconciler) attempt(ctx context.Context, obj *imagev1.ImageUpdateAutomation, src *gitSource, values setters.Values, out *outcome, attempt int) error {
	co, err := r.checkout(ctx, src)
	if err != nil {
		return failed(imagev1.GitOperationFailedReason, fmt.Errorf("failed to checkout source: %w", err))
	}
	out.sourceRevision = co.Revision()
	result, err := apply(co, obj, values)
	if err != nil {
		return err
	}
	if result.Empty() {
		return nil
	}
	message, err := commitMessage(obj, result)
	if err != nil {
		return err
	}
	author := obj.Spec.GitSpec.Commit.Author
	hash, err := co.Commit(message, git.Signature{Name: author.Name, Email: author.Email, When: r.now()}, src.signer)
	switch {
	case errors.Is(err, git.ErrNoStagedFiles):
		return nil
	case err != nil:
		return failed(imagev1.GitOperationFailedReason, fmt.Errorf("failed to update source: %w", err))
	}
	if r.beforePush != nil {
		r.beforePush(obj, attempt)
	}
	if err := co.PushWith(ctx, git.PushOptions{
		Branch: src.pushBranch, Force: r.ForcePushBranch && src.switchBranch(),
		Refspec: src.refspec, Options: src.options,
	}); err != nil {
		if errors.Is(err, git.ErrNonFastForward) && attempt+1 < pushAttempts {
			return err
		}
		return failed(imagev1.GitOperationFailedReason, fmt.Errorf("failed to update source: %w", err))
	}
	out.push = &pushed{commit: hash, branch: src.pushBranch, refspec: src.refspec, message: message, at: r.now(),
		revision: src.pushBranch + "@sha1:" + hash}
	if !src.switchBranch() {
		out.sourceRevision = out.push.revision
	}
	r.requestFetch(ctx, src.repo)
	return nil
}

// checkout opens the branch commits go on: the checkout branch, or, when
// another push branch is not force-pushed, that branch if it exists.
func (r *Reconciler) checkout(ctx context.Context, src *gitSource) (*git.Checkout, error) {
	if src.switchBranch() && !r.ForcePushBranch {
		co, err := git.OpenBranch(ctx, src.url, src.auth, src.pushBranch)
		if err != nil || co.Head() != "" {
			return co, err
		}
	}
	co, err := git.OpenBranch(ctx, src.url, src.auth, src.checkoutBranch)
	if err != nil {
		return nil, err
	}
	if co.Head() == "" {
		return nil, fmt.Errorf("branch '%s' not found in %s", src.checkoutBranch, src.url)
	}
	return co, nil
}

// apply runs the Setters strategy over spec.update.path of the checkout.
func apply(co *git.Checkout, obj *imagev1.ImageUpdateAutomation, values setters.Values) (setters.Result, error) {
	strategy := obj.GetUpdateStrategy()
	if strategy.Strategy != imagev1.UpdateStrategySetters {
		return setters.Result{}, stalled(imagev1.InvalidUpdateStrategyReason, "update strategy '%s' not supported", strategy.Strategy)
	}
	dir, err := co.ResolveDir(strategy.Path)
	if err == nil {
		var result setters.Result
		if result, err = setters.Update(co, dir, values); err == nil {
			return result, nil
		}
	}
	return setters.Result{}, failed(imagev1.UpdateFailedReason, fmt.Errorf("failed to apply policies: %w", err))
}

// requestFetch annotates the GitRepository with
// reconcile.fluxcd.io/requestedAt so that it fetches the pushed commit at
// once. A failure only costs the wait for its interval: it is logged.
func (r *Reconciler) requestFetch(ctx context.Context, key client.ObjectKey) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		meta.ReconcileRequestAnnotation: meta.NewReconcileRequestToken(r.now()),
	}}})
	if err == nil {
		repo := &sourcev1.GitRepository{}
		repo.Namespace, repo.Name = key.Namespace, key.Name
		err = r.Client.Patch(ctx, repo, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(ControllerName))
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot ask the GitRepository to fetch", "gitrepository", key.String())
	}
}
