package release

import (
	"crypto/sha1" //nolint:gosec // lastAttemptedValuesChecksum is SHA-1 by definition
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// SnapshotAPIVersion names how weir computes Snapshot.Digest.
const SnapshotAPIVersion = "v1"

// Info is what the state machine reads of one release revision in storage.
type Info struct {
	Name         string
	Namespace    string
	Version      int
	Status       rcommon.Status
	ChartName    string
	ChartVersion string
	AppVersion   string
	// ConfigDigest is Digest of the release's values (its config).
	ConfigDigest string
	// Digest identifies the stored record: it changes with any write.
	Digest        string
	FirstDeployed time.Time
	LastDeployed  time.Time
	Deleted       time.Time
	// TestHooks are the release's test hooks that ran, by name.
	TestHooks map[string]*helmv2.TestHookStatus
}

// Pending reports whether a Helm action was writing this revision and did
// not finish: pending-install, pending-upgrade or pending-rollback.
func (i *Info) Pending() bool { return i != nil && i.Status.IsPending() }

// FullName is <namespace>/<name>.v<version>, as messages name a release.
func (i *Info) FullName() string { return fmt.Sprintf("%s/%s.v%d", i.Namespace, i.Name, i.Version) }

// VersionedChart is <chart>@<version>.
func (i *Info) VersionedChart() string { return i.ChartName + "@" + i.ChartVersion }

// Observe reads the newest revision of the release from storage; nil when
// the release has none.
func (c *Client) Observe() (*Info, error) {
	c.last = nil
	rls, err := c.cfg.Releases.Last(c.opts.Name)
	if err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading release %s from storage: %w", c.opts.Name, err)
	}
	rel, err := toV1(rls)
	if err != nil || rel == nil {
		return nil, err
	}
	c.last = rel
	return InfoOf(rel), nil
}

// InfoOf summarises a stored release.
func InfoOf(rel *releasev1.Release) *Info {
	info := &Info{
		Name:         rel.Name,
		Namespace:    rel.Namespace,
		Version:      rel.Version,
		ConfigDigest: ValuesDigest(rel.Config),
		Digest:       releaseDigest(rel),
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		info.ChartName = rel.Chart.Metadata.Name
		info.ChartVersion = rel.Chart.Metadata.Version
		info.AppVersion = rel.Chart.Metadata.AppVersion
	}
	if rel.Info != nil {
		info.Status = rel.Info.Status
		info.FirstDeployed = rel.Info.FirstDeployed
		info.LastDeployed = rel.Info.LastDeployed
		info.Deleted = rel.Info.Deleted
	}
	info.TestHooks = testHooks(rel)
	return info
}

// testHooks returns the test hooks that have run, or nil when none has.
func testHooks(rel *releasev1.Release) map[string]*helmv2.TestHookStatus {
	var out map[string]*helmv2.TestHookStatus
	for _, h := range rel.Hooks {
		if h == nil || !isTestHook(h) || h.LastRun.Phase == "" || h.LastRun.Phase == releasev1.HookPhaseUnknown {
			continue
		}
		if out == nil {
			out = map[string]*helmv2.TestHookStatus{}
		}
		st := &helmv2.TestHookStatus{Phase: h.LastRun.Phase.String()}
		if !h.LastRun.StartedAt.IsZero() {
			st.LastStarted = &metav1.Time{Time: h.LastRun.StartedAt}
		}
		if !h.LastRun.CompletedAt.IsZero() {
			st.LastCompleted = &metav1.Time{Time: h.LastRun.CompletedAt}
		}
		out[h.Name] = st
	}
	return out
}

func isTestHook(h *releasev1.Hook) bool {
	for _, e := range h.Events {
		if e == releasev1.HookTest {
			return true
		}
	}
	return false
}

// ValuesDigest is "sha256:<hex>" of values encoded as JSON with sorted keys;
// no values and empty values have the same digest.
func ValuesDigest(values map[string]any) string {
	sum := sha256.Sum256(canonicalValues(values))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ValuesChecksum is the hex SHA-1 of the same encoding, Flux's deprecated
// status.lastAttemptedValuesChecksum.
func ValuesChecksum(values map[string]any) string {
	sum := sha1.Sum(canonicalValues(values)) //nolint:gosec // compatibility field
	return hex.EncodeToString(sum[:])
}

func canonicalValues(values map[string]any) []byte {
	if values == nil {
		values = map[string]any{}
	}
	b, err := json.Marshal(values)
	if err != nil {
		// Values come from YAML or JSON, so they always encode; keep the
		// digest defined anyway.
		return []byte(fmt.Sprintf("%v", values))
	}
	return b
}

// releaseDigest identifies a stored record by what the controller reads of
// it; the chart's files are left out, its name and version stand for it.
func releaseDigest(rel *releasev1.Release) string {
	type record struct {
		Name, Namespace string
		Version         int
		Status          string
		Chart           string
		Config          json.RawMessage
		Manifest        string
		LastDeployed    time.Time
		Hooks           []string
	}
	r := record{Name: rel.Name, Namespace: rel.Namespace, Version: rel.Version, Config: canonicalValues(rel.Config), Manifest: rel.Manifest}
	if rel.Info != nil {
		r.Status, r.LastDeployed = rel.Info.Status.String(), rel.Info.LastDeployed
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		r.Chart = rel.Chart.Metadata.Name + "@" + rel.Chart.Metadata.Version
	}
	for _, h := range rel.Hooks {
		if h != nil {
			r.Hooks = append(r.Hooks, h.Name+"="+h.LastRun.Phase.String())
		}
	}
	sort.Strings(r.Hooks)
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Snapshot turns a release into the status.history entry Flux writes.
// ociDigest is the chart artifact's digest for OCIRepository charts.
func (i *Info) Snapshot(action, ociDigest string) *helmv2.Snapshot {
	s := &helmv2.Snapshot{
		APIVersion:    SnapshotAPIVersion,
		Digest:        i.Digest,
		Name:          i.Name,
		Namespace:     i.Namespace,
		Version:       i.Version,
		Status:        i.Status.String(),
		ChartName:     i.ChartName,
		ChartVersion:  i.ChartVersion,
		AppVersion:    i.AppVersion,
		ConfigDigest:  i.ConfigDigest,
		FirstDeployed: metav1.Time{Time: i.FirstDeployed},
		LastDeployed:  metav1.Time{Time: i.LastDeployed},
		OCIDigest:     ociDigest,
		Action:        action,
	}
	if !i.Deleted.IsZero() {
		s.Deleted = &metav1.Time{Time: i.Deleted}
	}
	if i.TestHooks != nil {
		s.SetTestHooks(i.TestHooks)
	}
	return s
}
