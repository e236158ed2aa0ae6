package bootstrap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/install"
	"github.com/weir-gitops/weir/internal/kustomize"
)

// mustInstall reports whether the CLI has to apply the components: the
// flux-system Kustomization does not exist (or its kind is not installed)
// or has never applied a revision. After that the cluster manages itself.
func mustInstall(ctx context.Context, c client.Client, ns string) (bool, error) {
	var ks kustomizev1.Kustomization
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: SyncName}, &ks)
	switch {
	case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading Kustomization %s/%s: %w", ns, SyncName, err)
	}
	return ks.Status.LastAppliedRevision == "", nil
}

// build runs kustomize over <path>/flux-system as the cluster will, user
// patches included, and keeps the objects.
func (r *runner) build(ctx context.Context) error {
	dir := r.o.systemDir()
	tmp, err := os.MkdirTemp("", "weir-bootstrap-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	files, err := r.checkout.ListDir(dir)
	if err != nil {
		return err
	}
	for _, name := range files {
		data, err := r.checkout.ReadFile(dir + "/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o600); err != nil {
			return err
		}
	}
	res, err := kustomize.Build(ctx, kustomize.BuildOptions{Root: tmp, NoRemoteBases: true})
	if err != nil {
		return fmt.Errorf("building %s: %w", dir, err)
	}
	r.built = res.Objects
	return nil
}

// splitSync separates the GitRepository and Kustomization flux-system from
// the components.
func splitSync(objs []*unstructured.Unstructured) (components, sync []*unstructured.Unstructured) {
	for _, o := range objs {
		group := o.GroupVersionKind().Group
		isSync := o.GetName() == SyncName &&
			(o.GetKind() == "GitRepository" && group == sourcev1.GroupVersion.Group ||
				o.GetKind() == "Kustomization" && group == kustomizev1.GroupVersion.Group)
		if isSync {
			sync = append(sync, o)
		} else {
			components = append(components, o)
		}
	}
	return components, sync
}

// requestReconcile asks the GitRepository and Kustomization flux-system to
// reconcile now, as `weir reconcile` does, so that a new commit does not
// wait for the next interval.
func requestReconcile(ctx context.Context, c client.Client, ns, token string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, meta.ReconcileRequestAnnotation, token)
	targets := []struct {
		kind string
		obj  client.Object
	}{{"GitRepository", &sourcev1.GitRepository{}}, {"Kustomization", &kustomizev1.Kustomization{}}}
	for _, target := range targets {
		kind, obj := target.kind, target.obj
		obj.SetNamespace(ns)
		obj.SetName(SyncName)
		if err := c.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			return fmt.Errorf("requesting a reconcile of %s %s/%s: %w", kind, ns, SyncName, err)
		}
	}
	return nil
}

// waitSynced waits until the GitRepository has an artifact of the pushed
// revision and the Kustomization has applied it.
func (r *runner) waitSynced(ctx context.Context) error {
	ns, want := r.o.Components.Namespace, r.result.Revision
	key := client.ObjectKey{Namespace: ns, Name: SyncName}

	r.log.Waitingf("waiting for GitRepository %q to be reconciled", ns+"/"+SyncName)
	var last string
	err := r.poll(ctx, func(ctx context.Context) (bool, error) {
		var repo sourcev1.GitRepository
		if err := r.kube.Get(ctx, key, &repo); err != nil {
			last = err.Error()
			return false, nil
		}
		ready := apimeta.FindStatusCondition(repo.Status.Conditions, meta.ReadyCondition)
		last = conditionText(ready, repo.Status.Artifact != nil, "artifact revision", revisionOf(repo.Status.Artifact))
		return ready != nil && ready.Status == "True" && ready.ObservedGeneration == repo.Generation &&
			r.handled(repo.Status.LastHandledReconcileAt) &&
			repo.Status.Artifact != nil && meta.SameRevision(repo.Status.Artifact.Revision, want), nil
	})
	if err != nil {
		return fmt.Errorf("GitRepository %s/%s did not reach revision %s: %s", ns, SyncName, want, last)
	}
	r.log.Successf("GitRepository reconciled successfully")

	r.log.Waitingf("waiting for Kustomization %q to be reconciled", ns+"/"+SyncName)
	err = r.poll(ctx, func(ctx context.Context) (bool, error) {
		var ks kustomizev1.Kustomization
		if err := r.kube.Get(ctx, key, &ks); err != nil {
			last = err.Error()
			return false, nil
		}
		ready := apimeta.FindStatusCondition(ks.Status.Conditions, meta.ReadyCondition)
		last = conditionText(ready, true, "last applied revision", ks.Status.LastAppliedRevision)
		return ready != nil && ready.Status == "True" && ready.ObservedGeneration == ks.Generation &&
			r.handled(ks.Status.LastHandledReconcileAt) &&
			meta.SameRevision(ks.Status.LastAttemptedRevision, want) &&
			meta.SameRevision(ks.Status.LastAppliedRevision, want), nil
	})
	if err != nil {
		return fmt.Errorf("Kustomization %s/%s did not apply revision %s: %s", ns, SyncName, want, last) //nolint:staticcheck // ST1005: the message starts with the kind name, as flux prints it
	}
	r.log.Successf("Kustomization reconciled successfully")
	return nil
}

// handled reports whether an object has handled bootstrap's reconcile
// request, if it made one.
func (r *runner) handled(lastHandled string) bool {
	return r.requested == "" || lastHandled == r.requested
}

func revisionOf(a *meta.Artifact) string {
	if a == nil {
		return ""
	}
	return a.Revision
}

// conditionText describes where an object stands, for the timeout error.
func conditionText(ready *metav1.Condition, hasArtifact bool, what, revision string) string {
	var b strings.Builder
	if ready == nil {
		b.WriteString("no Ready condition yet")
	} else {
		fmt.Fprintf(&b, "Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message)
	}
	if hasArtifact && revision != "" {
		fmt.Fprintf(&b, " (%s %s)", what, revision)
	}
	return b.String()
}

// waitComponents waits for every component Deployment to be ready.
func (r *runner) waitComponents(ctx context.Context) error {
	ns := r.o.Components.Namespace
	var names []string
	for _, o := range r.built {
		if o.GetKind() == "Deployment" && o.GroupVersionKind().Group == "apps" && o.GetNamespace() == ns {
			names = append(names, o.GetName())
		}
	}
	r.log.Actionf("confirming components are healthy")
	err := install.WaitDeployments(ctx, r.kube, ns, names, r.o.Poll, func(name string) {
		r.log.Successf("%s: deployment ready", name)
	})
	if err != nil {
		return err
	}
	r.log.Successf("all components are healthy")
	return nil
}

// poll runs check every Options.Poll until it is done or ctx ends.
func (r *runner) poll(ctx context.Context, check wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextCancel(ctx, r.o.Poll, true, check)
}
