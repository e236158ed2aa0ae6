package install

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
)

// UninstallOptions configures Uninstall.
type UninstallOptions struct {
	// Namespace is the installation's namespace.
	Namespace string
	// KeepNamespace leaves the namespace (and what else is in it).
	KeepNamespace bool
	// DryRun makes every change a server-side dry run.
	DryRun bool
	// Timeout bounds the wait for the controllers' pods to go; zero means
	// a minute.
	Timeout time.Duration
	// Poll is how often pods are listed while waiting; zero means 500ms.
	Poll time.Duration
	// Stage is called as each stage starts; Done after each object is
	// changed: verb is "deleted" or "finalizers deleted".
	Stage func(msg string)
	Done  func(ref, verb string)
}

// namespaced and clusterScoped are the kinds of an installation, in the
// order Uninstall deletes them.
var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	namespaced    = []schema.GroupVersionKind{
		{Version: "v1", Kind: "Service"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
		{Version: "v1", Kind: "ServiceAccount"},
		{Version: "v1", Kind: "ResourceQuota"},
	}
	clusterScoped = []schema.GroupVersionKind{
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	}
)

// Uninstall removes an installation without touching what it deployed:
//
//  1. weir's finalizer comes off every custom resource of weir's CRDs, in
//     every namespace, so that deleting them later runs no garbage
//     collection (a Kustomization with prune: true would otherwise delete
//     its inventory);
//  2. the controller Deployments go, and Uninstall waits for their pods to
//     end, so no controller is left to put a finalizer back;
//  3. finalizers are released once more, for any a controller re-added
//     between 1 and 2;
//  4. Services, NetworkPolicies, ServiceAccounts, the ResourceQuota, the
//     ClusterRoleBindings and ClusterRoles, the CRDs (and with them the
//     custom resources) and, unless kept, the namespace are deleted.
//
// Objects are found by Flux's labels: app.kubernetes.io/part-of=flux in the
// namespace, and with app.kubernetes.io/instance=<namespace> cluster-wide.
func Uninstall(ctx context.Context, c client.Client, opts UninstallOptions) error {
	if opts.Stage == nil {
		opts.Stage = func(string) {}
	}
	if opts.Done == nil {
		opts.Done = func(string, string) {}
	}
	crds, err := listCRDs(ctx, c)
	if err != nil {
		return err
	}
	opts.Stage("deleting " + meta.Finalizer + " finalizers in all namespaces")
	if err := releaseFinalizers(ctx, c, crds, opts); err != nil {
		return err
	}
	opts.Stage(fmt.Sprintf("deleting components in %s namespace", opts.Namespace))
	inNS := client.MatchingLabels{meta.PartOfLabel: meta.PartOfValue}
	deployments, err := deleteAll(ctx, c, deploymentGVK, opts, client.InNamespace(opts.Namespace), inNS)
	if err != nil {
		return err
	}
	if len(deployments) > 0 && !opts.DryRun {
		if err := waitPodsGone(ctx, c, opts); err != nil {
			return err
		}
		if err := releaseFinalizers(ctx, c, crds, opts); err != nil {
			return err
		}
	}
	for _, gvk := range namespaced {
		if _, err := deleteAll(ctx, c, gvk, opts, client.InNamespace(opts.Namespace), inNS); err != nil {
			return err
		}
	}
	for _, gvk := range clusterScoped {
		if _, err := deleteAll(ctx, c, gvk, opts,
			client.MatchingLabels{meta.PartOfLabel: meta.PartOfValue, meta.InstanceLabel: opts.Namespace}); err != nil {
			return err
		}
	}
	opts.Stage("deleting toolkit.fluxcd.io custom resource definitions")
	for i := range crds {
		if err := deleteOne(ctx, c, &crds[i], opts); err != nil {
			return err
		}
	}
	if !opts.KeepNamespace {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(opts.Namespace)
		if err := deleteOne(ctx, c, ns, opts); err != nil {
			return err
		}
	}
	return nil
}

func listCRDs(ctx context.Context, c client.Client) ([]apiextensionsv1.CustomResourceDefinition, error) {
	var list apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(ctx, &list, client.MatchingLabels{meta.PartOfLabel: meta.PartOfValue}); err != nil {
		return nil, fmt.Errorf("listing CRDs: %w", err)
	}
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	}
	return list.Items, nil
}

// storedVersion is the version the API server stores crd's objects in.
func storedVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return crd.Spec.Versions[0].Name
}

func releaseFinalizers(ctx context.Context, c client.Client, crds []apiextensionsv1.CustomResourceDefinition, opts UninstallOptions) error {
	for i := range crds {
		crd := &crds[i]
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: storedVersion(crd), Kind: crd.Spec.Names.ListKind})
		if err := c.List(ctx, list); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("listing %s: %w", crd.Spec.Names.Plural, err)
		}
		for j := range list.Items {
			obj := &list.Items[j]
			if !slices.Contains(obj.GetFinalizers(), meta.Finalizer) {
				continue
			}
			patch := client.MergeFrom(obj.DeepCopy())
			obj.SetFinalizers(slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == meta.Finalizer }))
			var patchOpts []client.PatchOption
			if opts.DryRun {
				patchOpts = append(patchOpts, client.DryRunAll)
			}
			if err := c.Patch(ctx, obj, patch, patchOpts...); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("removing finalizers from %s: %w", ObjectRef(obj), err)
			}
			opts.Done(ObjectRef(obj), "finalizers deleted")
		}
	}
	return nil
}

func deleteAll(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, opts UninstallOptions,
	listOpts ...client.ListOption) ([]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, listOpts...); err != nil {
		return nil, fmt.Errorf("listing %ss: %w", gvk.Kind, err)
	}
	var names []string
	for i := range list.Items {
		obj := &list.Items[i]
		obj.SetGroupVersionKind(gvk)
		if err := deleteOne(ctx, c, obj, opts); err != nil {
			return nil, err
		}
		names = append(names, obj.GetName())
	}
	return names, nil
}

func deleteOne(ctx context.Context, c client.Client, obj client.Object, opts UninstallOptions) error {
	delOpts := []client.DeleteOption{client.PropagationPolicy("Background")}
	if opts.DryRun {
		delOpts = append(delOpts, client.DryRunAll)
	}
	if err := c.Delete(ctx, obj, delOpts...); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting %s: %w", ObjectRef(obj), err)
	}
	opts.Done(ObjectRef(obj), "deleted")
	return nil
}

// waitPodsGone waits until no pod of the installation is left in the
// namespace: until then a controller may still be reconciling.
func waitPodsGone(ctx context.Context, c client.Client, opts UninstallOptions) error {
	timeout, poll := opts.Timeout, opts.Poll
	if timeout <= 0 {
		timeout = time.Minute
	}
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	var left int
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		pods := &unstructured.UnstructuredList{}
		pods.SetAPIVersion("v1")
		pods.SetKind("PodList")
		if err := c.List(ctx, pods, client.InNamespace(opts.Namespace),
			client.MatchingLabels{meta.PartOfLabel: meta.PartOfValue}); err != nil {
			return false, nil
		}
		left = len(pods.Items)
		return left == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the controllers' pods to end (%d left): %w", left, err)
	}
	return nil
}
