package ssa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"gomodules.xyz/jsonpatch/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
)

// DiffAction is how an object in the cluster differs from what applying its
// manifest would make of it.
type DiffAction string

const (
	// DiffCreated means the object is not in the cluster (or its kind or
	// namespace is not yet): applying creates it.
	DiffCreated DiffAction = "created"
	// DiffChanged means applying would change the object.
	DiffChanged DiffAction = "changed"
	// DiffUnchanged means applying would change nothing.
	DiffUnchanged DiffAction = "unchanged"
	// DiffDeleted means the object is gone from the newer manifests
	// (CompareManifests only).
	DiffDeleted DiffAction = "deleted"
)

// masked replaces every Secret value in a diff.
const masked = "*****"

// DiffOptions configures Diff.
type DiffOptions struct {
	// FieldManager dry-runs the apply; default "kustomize-controller".
	FieldManager string
	// IgnorePaths are JSON pointers (RFC 6901) removed from both the
	// object in the cluster and the dry-run result before they are
	// compared: a change there is no difference.
	IgnorePaths []string
	// AbsentWithoutDryRun reports an object absent from the cluster as
	// DiffCreated without dry-running its creation: drift detection only
	// asks whether it is missing, and an admission policy that would
	// refuse to create it must not hide that it is.
	AbsentWithoutDryRun bool
	// DesiredName names the manifest's side in the diff's header,
	// "<kind>/<ns>/<name> (<DesiredName>)"; default "desired". The
	// cluster's side is "(cluster)".
	DesiredName string
}

// ObjectDiff is what Diff found for one object.
type ObjectDiff struct {
	ObjMetadata
	Action DiffAction
	// Diff is a unified diff of the object's YAML, cluster first, for
	// DiffChanged; Secret data and stringData values are masked, showing
	// only which keys changed.
	Diff string
	// Patch is the JSON patch (RFC 6902) that turns the object in the
	// cluster into the dry-run result, ignored paths, status and
	// server-set metadata left out, for DiffChanged. It holds Secret
	// values: never print it.
	Patch []jsonpatch.Operation
	// Live is the object in the cluster; nil when it is absent.
	Live *unstructured.Unstructured
}

// Counts returns how many fields the patch adds, changes and removes.
func (d *ObjectDiff) Counts() (added, changed, removed int) {
	for _, op := range d.Patch {
		switch op.Operation {
		case "add":
			added++
		case "replace":
			changed++
		case "remove":
			removed++
		}
	}
	return added, changed, removed
}

// Diff dry-run applies obj (server-side, force, opts.FieldManager) and
// compares the result with the object in the cluster, without changing
// anything. An object whose kind or namespace does not exist yet is
// DiffCreated: a build may create both.
func (m *Manager) Diff(ctx context.Context, obj *unstructured.Unstructured, opts DiffOptions) (*ObjectDiff, error) {
	if opts.FieldManager == "" {
		opts.FieldManager = meta.KustomizeControllerManager
	}
	if opts.DesiredName == "" {
		opts.DesiredName = "desired"
	}
	out := &ObjectDiff{ObjMetadata: ObjMetadataOf(obj), Action: DiffCreated}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := m.client.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case apimeta.IsNoMatchError(err):
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("reading the object: %w", err)
	}
	if live == nil && opts.AbsentWithoutDryRun {
		return out, nil
	}
	merged := obj.DeepCopy()
	if err := m.apply(ctx, merged, opts.FieldManager, true); err != nil {
		if live == nil && apierrors.IsNotFound(err) {
			return out, nil
		}
		return nil, fmt.Errorf("dry-run failed: %w", err)
	}
	if live == nil {
		return out, nil
	}
	out.Live = live
	return compare(out, live, merged, opts)
}

// compare fills d from the object in the cluster and the dry-run result.
func compare(d *ObjectDiff, live, merged *unstructured.Unstructured, opts DiffOptions) (*ObjectDiff, error) {
	before, after := comparableCopy(live), comparableCopy(merged)
	for _, p := range opts.IgnorePaths {
		if err := RemovePointer(before.Object, p); err != nil {
			return nil, err
		}
		if err := RemovePointer(after.Object, p); err != nil {
			return nil, err
		}
	}
	a, err := json.Marshal(before.Object)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(after.Object)
	if err != nil {
		return nil, err
	}
	if d.Patch, err = jsonpatch.CreatePatch(a, b); err != nil {
		return nil, fmt.Errorf("comparing with the cluster: %w", err)
	}
	d.Action = DiffUnchanged
	if len(d.Patch) == 0 {
		return d, nil
	}
	d.Action = DiffChanged
	d.Diff, err = unifiedDiff(d.String(), before, after, "cluster", opts.DesiredName)
	return d, err
}

// CompareManifests compares two manifests of one object offline, as
// `weir diff --base` compares two revisions' renders: before is the
// object at fromName (nil when it is absent there: DiffCreated), after
// at toName (nil: DiffDeleted). Every action but DiffUnchanged carries a
// unified diff (against nothing for created and deleted objects), Secret
// values masked as Diff masks them; the Patch is left empty.
func CompareManifests(before, after *unstructured.Unstructured, fromName, toName string) (*ObjectDiff, error) {
	var id ObjMetadata
	var b, a *unstructured.Unstructured
	switch {
	case before == nil && after == nil:
		return nil, errors.New("comparing manifests: both sides are absent")
	case before == nil:
		id, a = ObjMetadataOf(after), comparableCopy(after)
		b = &unstructured.Unstructured{Object: map[string]any{}}
	case after == nil:
		id, b = ObjMetadataOf(before), comparableCopy(before)
		a = &unstructured.Unstructured{Object: map[string]any{}}
	default:
		id, b, a = ObjMetadataOf(after), comparableCopy(before), comparableCopy(after)
	}
	out := &ObjectDiff{ObjMetadata: id, Action: DiffChanged}
	switch {
	case before == nil:
		out.Action = DiffCreated
	case after == nil:
		out.Action = DiffDeleted
	case equality.Semantic.DeepEqual(b.Object, a.Object):
		out.Action = DiffUnchanged
		return out, nil
	}
	var err error
	out.Diff, err = unifiedDiff(id.String(), b, a, fromName, toName)
	return out, err
}

// unifiedDiff masks Secret values in before and after (copies the caller
// owns) and returns the unified diff of their YAML, an empty object
// standing for an absent side.
func unifiedDiff(id string, before, after *unstructured.Unstructured, fromName, toName string) (string, error) {
	maskSecrets(before, after)
	ya, err := manifestYAML(before)
	if err != nil {
		return "", err
	}
	yb, err := manifestYAML(after)
	if err != nil {
		return "", err
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: splitLines(ya), B: splitLines(yb),
		FromFile: id + " (" + fromName + ")", ToFile: id + " (" + toName + ")", Context: 3,
	})
	return strings.TrimRight(text, "\n"), err
}

// splitLines splits s after each newline. difflib.SplitLines adds an
// empty last line, which showed as a blank context line at the end of
// every hunk that reached the end of the object, and as a changed line
// against an absent side.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// manifestYAML is o's YAML, or nothing for an empty object.
func manifestYAML(o *unstructured.Unstructured) (string, error) {
	if len(o.Object) == 0 {
		return "", nil
	}
	data, err := yaml.Marshal(o.Object)
	return string(data), err
}

// comparableCopy drops what the server changes on every write, and status,
// which no apply sets.
func comparableCopy(o *unstructured.Unstructured) *unstructured.Unstructured {
	c := o.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	delete(c.Object, "status")
	return c
}

// maskSecrets hides Secret values, keeping visible whether each changed.
func maskSecrets(before, after *unstructured.Unstructured) {
	if !isSecret(before) && !isSecret(after) {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		b, _ := before.Object[field].(map[string]any)
		a, _ := after.Object[field].(map[string]any)
		for k, v := range b {
			if av, ok := a[k]; ok && av == v {
				b[k], a[k] = masked, masked
				continue
			}
			b[k] = masked + " (before)"
		}
		for k, v := range a {
			if v != masked {
				a[k] = masked + " (after)"
			}
		}
	}
}

func isSecret(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Secret" && o.GetAPIVersion() == "v1"
}
