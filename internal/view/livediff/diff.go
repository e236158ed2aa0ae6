package livediff

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// Action is what applying would do to one object.
type Action string

// The actions a Result lists.
const (
	Created Action = "created"
	Changed Action = "changed"
	Deleted Action = "deleted"
)

// Change is one object that would change.
type Change struct {
	// ID is Kind/namespace/name (Kind/name when cluster-scoped).
	ID     string `json:"id"`
	Action Action `json:"-"`
	// Diff is the unified diff, cluster first, of a changed object, or
	// against nothing of a created one (the manifest applied), Secret
	// values masked; "" for deleted objects.
	Diff string `json:"diff,omitempty"`
}

// Result lists what would change, in the order the objects were
// rendered, the deletions last (sorted).
type Result struct {
	Changes []Change
}

// Of lists the changes of one action.
func (r *Result) Of(a Action) []Change {
	out := []Change{}
	for _, c := range r.Changes {
		if c.Action == a {
			out = append(out, c)
		}
	}
	return out
}

// HasChanges reports whether anything would change.
func (r *Result) HasChanges() bool { return r != nil && len(r.Changes) > 0 }

// Print writes the result as `weir diff` prints it: "► ID created",
// "► ID drifted" and its diff, "► ID deleted" (a created object's
// manifest is not printed).
func (r *Result) Print(w io.Writer) {
	if r == nil {
		return
	}
	for _, c := range r.Changes {
		switch c.Action {
		case Changed:
			fmt.Fprintf(w, "► %s drifted\n%s\n", c.ID, c.Diff)
		default:
			fmt.Fprintf(w, "► %s %s\n", c.ID, c.Action)
		}
	}
}

// dryRun dry-runs every object as fieldManager, adds those that would be
// created or changed to r, and returns the ids it saw. On an error, r
// holds the objects before the one that failed.
func (r *Result) dryRun(ctx context.Context, c client.Client, objects []*unstructured.Unstructured, fieldManager string) (map[ssa.ObjMetadata]bool, error) {
	m := ssa.NewManager(c, ssa.Options{})
	seen := map[ssa.ObjMetadata]bool{}
	for _, o := range objects {
		id := ssa.ObjMetadataOf(o)
		seen[id] = true
		d, err := m.Diff(ctx, o.DeepCopy(), ssa.DiffOptions{FieldManager: fieldManager, DesiredName: "local"})
		if err != nil {
			return seen, fmt.Errorf("%s: %w", id, err)
		}
		switch {
		case d.Action == ssa.DiffCreated:
			whole, err := ssa.CompareManifests(nil, o, "cluster", "local")
			if err != nil {
				return seen, fmt.Errorf("%s: %w", id, err)
			}
			r.Changes = append(r.Changes, Change{ID: id.String(), Action: Created, Diff: whole.Diff})
		case d.Diff != "":
			r.Changes = append(r.Changes, Change{ID: id.String(), Action: Changed, Diff: d.Diff})
		}
	}
	return seen, nil
}

// deleted adds ids (sorted) as deletions.
func (r *Result) deleted(ids []string) {
	for _, id := range ids {
		r.Changes = append(r.Changes, Change{ID: id, Action: Deleted})
	}
}
