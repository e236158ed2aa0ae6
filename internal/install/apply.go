package install

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyOptions configures Apply.
type ApplyOptions struct {
	// Timeout bounds the wait for CRDs to be Established.
	Timeout time.Duration
	// Poll is how often the CRDs are read while waiting; zero means 500ms.
	Poll time.Duration
	// DryRun applies with a server-side dry run: nothing is stored, and the
	// CRDs are not waited for.
	DryRun bool
}

// Apply applies objs with server-side apply in two stages: Namespaces and
// CRDs first, waiting until every CRD is Established so that objects of
// those kinds can follow; then everything else, in the order given.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts ApplyOptions) error {
	var first, rest []*unstructured.Unstructured
	var crds []string
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crds = append(crds, o.GetName())
			first = append(first, o)
		case "Namespace":
			first = append(first, o)
		default:
			rest = append(rest, o)
		}
	}
	if err := applyAll(ctx, c, first, opts.DryRun); err != nil {
		return err
	}
	if !opts.DryRun {
		if err := waitEstablished(ctx, c, crds, opts); err != nil {
			return err
		}
	}
	return applyAll(ctx, c, rest, opts.DryRun)
}

func applyAll(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, dryRun bool) error {
	for _, o := range objs {
		patchOpts := []client.PatchOption{client.FieldOwner(FieldManager), client.ForceOwnership}
		if dryRun {
			patchOpts = append(patchOpts, client.DryRunAll)
		}
		//nolint:staticcheck // server-side apply of unstructured objects is what we want here
		if err := c.Patch(ctx, o.DeepCopy(), client.Apply, patchOpts...); err != nil {
			return fmt.Errorf("applying %s: %w", ObjectRef(o), err)
		}
	}
	return nil
}

// ObjectRef names an object the way kubectl and Flux print it:
// Kind/namespace/name, or Kind/name for a cluster-scoped object.
func ObjectRef(o client.Object) string {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if o.GetNamespace() == "" {
		return kind + "/" + o.GetName()
	}
	return kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

func waitEstablished(ctx context.Context, c client.Client, names []string, opts ApplyOptions) error {
	poll := opts.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	var pending string
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil || !established(&got) {
				pending = name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established: %w", pending, err)
	}
	return nil
}

// DeploymentStatus is what WaitDeployments reports of one Deployment.
type DeploymentStatus struct {
	Name    string
	Status  status.Status
	Message string
}

// WaitDeployments polls the named Deployments in ns until each is Current
// by kstatus rules. ready is called once per Deployment, in the order of
// names, as soon as it and every Deployment before it are Current: progress
// shows as it happens, and the output is the same from run to run. On
// timeout the error names those still pending with their last status.
func WaitDeployments(ctx context.Context, c client.Client, ns string, names []string, poll time.Duration,
	ready func(name string)) error {
	if poll <= 0 {
		poll = 2 * time.Second
	}
	last := map[string]DeploymentStatus{}
	current := map[string]bool{}
	reported := 0
	err := wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			if current[name] {
				continue
			}
			st := DeploymentHealth(ctx, c, ns, name)
			last[name] = st
			current[name] = st.Status == status.CurrentStatus
		}
		for reported < len(names) && current[names[reported]] {
			if ready != nil {
				ready(names[reported])
			}
			reported++
		}
		return reported == len(names), nil
	})
	if err != nil {
		var pending []string
		for _, name := range names {
			if !current[name] {
				st := last[name]
				pending = append(pending, fmt.Sprintf("Deployment/%s/%s status: '%s': %s", ns, name, st.Status, st.Message))
			}
		}
		return fmt.Errorf("timeout waiting for: %v", pending)
	}
	return nil
}

// DeploymentHealth reads one Deployment and computes its kstatus.
func DeploymentHealth(ctx context.Context, c client.Client, ns, name string) DeploymentStatus {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return DeploymentStatus{Name: name, Status: status.NotFoundStatus, Message: err.Error()}
	}
	res, err := status.Compute(u)
	if err != nil {
		return DeploymentStatus{Name: name, Status: status.UnknownStatus, Message: err.Error()}
	}
	return DeploymentStatus{Name: name, Status: res.Status, Message: res.Message}
}
