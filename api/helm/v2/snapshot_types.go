package v2

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Snapshots is the release history of a HelmRelease, newest first.
type Snapshots []*Snapshot

// Latest returns the newest snapshot, or nil when there is none.
func (in Snapshots) Latest() *Snapshot {
	if len(in) == 0 {
		return nil
	}
	return in[0]
}

// Previous returns the newest snapshot after the latest one that is
// deployed or superseded, i.e. a release that a rollback could return to.
// With ignoreTests false, a release whose tests failed does not count.
func (in Snapshots) Previous(ignoreTests bool) *Snapshot {
	if len(in) < 2 {
		return nil
	}
	for _, s := range in[1:] {
		if s.Status != "deployed" && s.Status != "superseded" {
			continue
		}
		if !ignoreTests && s.HasTestInPhase("Failed") {
			continue
		}
		return s
	}
	return nil
}

// Snapshot records one Helm release (a revision in Helm's storage) as the
// controller saw it.
type Snapshot struct {
	// APIVersion identifies how Digest was computed, so a change of method
	// can be told apart from a change of release.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Digest is <algorithm>:<hex> of the release object in storage.
	// +required
	Digest string `json:"digest"`

	// Name of the release.
	// +required
	Name string `json:"name"`

	// Namespace the release is installed in.
	// +required
	Namespace string `json:"namespace"`

	// Version is the release revision number in storage.
	// +required
	Version int `json:"version"`

	// Status of the release in storage, for example deployed or failed.
	// +required
	Status string `json:"status"`

	// ChartName is the name of the released chart.
	// +required
	ChartName string `json:"chartName"`

	// ChartVersion is the version of the released chart.
	// +required
	ChartVersion string `json:"chartVersion"`

	// AppVersion is the chart's appVersion.
	// +optional
	AppVersion string `json:"appVersion,omitempty"`

	// ConfigDigest is <algorithm>:<hex> of the release's values.
	// +required
	ConfigDigest string `json:"configDigest"`

	// FirstDeployed is when the release was first deployed.
	// +required
	FirstDeployed metav1.Time `json:"firstDeployed"`

	// LastDeployed is when the release was last deployed.
	// +required
	LastDeployed metav1.Time `json:"lastDeployed"`

	// Deleted is when the release was uninstalled.
	// +optional
	Deleted *metav1.Time `json:"deleted,omitempty"`

	// TestHooks records, by hook name, the test hooks the controller ran
	// for this release.
	// +optional
	TestHooks *map[string]*TestHookStatus `json:"testHooks,omitempty"`

	// OCIDigest is the digest of the OCI artifact the chart came from.
	// +optional
	OCIDigest string `json:"ociDigest,omitempty"`

	// Action is the Helm action that produced this release.
	// +optional
	Action string `json:"action,omitempty"`
}

// FullReleaseName returns <namespace>/<name>.v<version>, the way events
// and condition messages name a release.
func (in *Snapshot) FullReleaseName() string {
	if in == nil {
		return ""
	}
	return fmt.Sprintf("%s/%s.v%d", in.Namespace, in.Name, in.Version)
}

// VersionedChartName returns <chart>@<version>.
func (in *Snapshot) VersionedChartName() string {
	if in == nil {
		return ""
	}
	return in.ChartName + "@" + in.ChartVersion
}

// GetTestHooks returns the recorded test hooks, possibly nil.
func (in *Snapshot) GetTestHooks() map[string]*TestHookStatus {
	if in == nil || in.TestHooks == nil {
		return nil
	}
	return *in.TestHooks
}

// SetTestHooks replaces the recorded test hooks.
func (in *Snapshot) SetTestHooks(hooks map[string]*TestHookStatus) {
	in.TestHooks = &hooks
}

// HasBeenTested says whether tests were run for this release. An empty,
// non-nil map means the chart had no tests to run.
func (in *Snapshot) HasBeenTested() bool {
	return in != nil && in.TestHooks != nil
}

// HasTestInPhase says whether any recorded test hook is in phase.
func (in *Snapshot) HasTestInPhase(phase string) bool {
	for _, h := range in.GetTestHooks() {
		if h != nil && h.Phase == phase {
			return true
		}
	}
	return false
}

// TestHookStatus is what the controller saw of one test hook run.
type TestHookStatus struct {
	// LastStarted is when the hook last started.
	// +optional
	LastStarted *metav1.Time `json:"lastStarted,omitempty"`

	// LastCompleted is when the hook last finished.
	// +optional
	LastCompleted *metav1.Time `json:"lastCompleted,omitempty"`

	// Phase the hook was in, for example Succeeded or Failed.
	// +optional
	Phase string `json:"phase,omitempty"`
}
