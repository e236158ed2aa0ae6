package livediff

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResult(t *testing.T) {
	r := &Result{Changes: []Change{
		{ID: "ConfigMap/apps/new", Action: Created, Diff: "+a"},
		{ID: "ConfigMap/apps/web", Action: Changed, Diff: "--- a\n+++ b"},
		{ID: "Namespace/apps", Action: Created},
		{ID: "Secret/apps/old", Action: Deleted},
	}}
	var b bytes.Buffer
	r.Print(&b)
	want := "► ConfigMap/apps/new created\n► ConfigMap/apps/web drifted\n--- a\n+++ b\n► Namespace/apps created\n► Secret/apps/old deleted\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("Print (-want +got):\n%s", diff)
	}
	if got := r.Of(Created); len(got) != 2 || got[1].ID != "Namespace/apps" {
		t.Errorf("Of(Created) = %v", got)
	}
	if got := r.Of(Deleted); len(got) != 1 {
		t.Errorf("Of(Deleted) = %v", got)
	}
	if !r.HasChanges() || (&Result{}).HasChanges() || (*Result)(nil).HasChanges() {
		t.Error("HasChanges")
	}
	(*Result)(nil).Print(&b) // a failed render prints nothing
}
