package v2

import "testing"

func TestSnapshotNames(t *testing.T) {
	s := &Snapshot{Name: "podinfo", Namespace: "default", Version: 3, ChartName: "podinfo", ChartVersion: "6.5.3"}
	if got := s.FullReleaseName(); got != "default/podinfo.v3" {
		t.Errorf("FullReleaseName() = %q", got)
	}
	if got := s.VersionedChartName(); got != "podinfo@6.5.3" {
		t.Errorf("VersionedChartName() = %q", got)
	}
}

func TestSnapshotTests(t *testing.T) {
	s := &Snapshot{}
	if s.HasBeenTested() {
		t.Error("HasBeenTested() = true without test hooks")
	}
	s.SetTestHooks(map[string]*TestHookStatus{})
	if !s.HasBeenTested() {
		t.Error("HasBeenTested() = false after an empty test run")
	}
	s.SetTestHooks(map[string]*TestHookStatus{"a": {Phase: "Succeeded"}, "b": {Phase: "Failed"}})
	if !s.HasTestInPhase("Failed") || s.HasTestInPhase("Running") {
		t.Error("HasTestInPhase does not reflect the recorded phases")
	}
}

func TestSnapshotsPrevious(t *testing.T) {
	failedTests := &Snapshot{Version: 3, Status: "superseded"}
	failedTests.SetTestHooks(map[string]*TestHookStatus{"t": {Phase: "Failed"}})
	history := Snapshots{
		{Version: 5, Status: "failed"},
		{Version: 4, Status: "failed"},
		failedTests,
		{Version: 2, Status: "superseded"},
	}
	if got := history.Latest().Version; got != 5 {
		t.Errorf("Latest() = v%d, want v5", got)
	}
	if got := history.Previous(false); got == nil || got.Version != 2 {
		t.Errorf("Previous(false) = %v, want v2", got)
	}
	if got := history.Previous(true); got == nil || got.Version != 3 {
		t.Errorf("Previous(true) = %v, want v3", got)
	}
	if got := (Snapshots{{Version: 1}}).Previous(true); got != nil {
		t.Errorf("Previous() of a single snapshot = %v, want nil", got)
	}
	if (Snapshots{}).Latest() != nil {
		t.Error("Latest() of empty history is not nil")
	}
}
