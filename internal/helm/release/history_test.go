package release

import (
	"testing"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

func snap(version int, status string) *helmv2.Snapshot {
	return &helmv2.Snapshot{Name: "app", Namespace: "apps", Version: version, Status: status}
}

func versions(h helmv2.Snapshots) []int {
	out := []int{}
	for _, s := range h {
		out = append(out, s.Version)
	}
	return out
}

func TestRecord(t *testing.T) {
	failedTests := snap(2, "superseded")
	failedTests.SetTestHooks(map[string]*helmv2.TestHookStatus{"t": {Phase: "Failed"}})
	tests := []struct {
		name        string
		history     helmv2.Snapshots
		add         *helmv2.Snapshot
		max         int
		ignoreTests bool
		want        []int
	}{
		{"first", nil, snap(1, "deployed"), 5, false, []int{1}},
		{"upgrade keeps the previous success", helmv2.Snapshots{snap(1, "superseded")}, snap(2, "deployed"), 5, false, []int{2, 1}},
		{"older successes dropped", helmv2.Snapshots{snap(2, "superseded"), snap(1, "superseded")}, snap(3, "deployed"), 5, false, []int{3, 2}},
		{"failures kept back to the last success", helmv2.Snapshots{snap(3, "failed"), snap(2, "failed"), snap(1, "superseded")}, snap(4, "pending-upgrade"), 5, false, []int{4, 3, 2, 1}},
		{"same revision replaced", helmv2.Snapshots{snap(2, "pending-upgrade"), snap(1, "deployed")}, snap(2, "failed"), 5, false, []int{2, 1}},
		{"maxHistory caps", helmv2.Snapshots{snap(3, "failed"), snap(2, "failed"), snap(1, "superseded")}, snap(4, "failed"), 2, false, []int{4, 3}},
		{"failed tests are no rollback target", helmv2.Snapshots{failedTests, snap(1, "superseded")}, snap(3, "failed"), 5, false, []int{3, 2, 1}},
		{"unless ignored", helmv2.Snapshots{failedTests, snap(1, "superseded")}, snap(3, "failed"), 5, true, []int{3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := versions(Record(tt.history, tt.add, tt.max, tt.ignoreTests))
			if len(got) != len(tt.want) {
				t.Fatalf("versions = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("versions = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestRecordKeepsTestResults(t *testing.T) {
	old := snap(1, "deployed")
	old.SetTestHooks(map[string]*helmv2.TestHookStatus{})
	old.OCIDigest = "sha256:abc"
	got := Record(helmv2.Snapshots{old}, snap(1, "superseded"), 5, false)
	if !got[0].HasBeenTested() || got[0].OCIDigest != "sha256:abc" || got[0].Status != "superseded" {
		t.Errorf("merged snapshot = %+v", got[0])
	}
}
