package v2

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Defaults a HelmRelease falls back to.
const (
	// DefaultTimeout bounds each Kubernetes operation of a Helm action.
	DefaultTimeout = 5 * time.Minute
	// DefaultMaxHistory is how many release revisions Helm keeps.
	DefaultMaxHistory = 5
)

// Release-name shortening: Helm accepts at most 53 characters, so a longer
// default name keeps its first 40 characters and gets a 12-character
// SHA-256 suffix, which keeps it unique.
const (
	maxReleaseNameLength   = 53
	shortenedNamePrefixLen = 40
	shortenedNameHashLen   = 12
)

// HelmReleaseSpec is the desired state of a Helm release.
// +kubebuilder:validation:XValidation:rule="(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))",message="either chart or chartRef must be set"
type HelmReleaseSpec struct {
	// Chart is the template of a HelmChart the controller creates to get
	// the chart from a HelmRepository, GitRepository or Bucket. Exactly
	// one of Chart and ChartRef is set.
	// +optional
	Chart *HelmChartTemplate `json:"chart,omitempty"`

	// ChartRef names an OCIRepository, HelmChart or ExternalArtifact whose
	// artifact is the chart. Exactly one of Chart and ChartRef is set.
	// +optional
	ChartRef *CrossNamespaceSourceReference `json:"chartRef,omitempty"`

	// Interval between reconciliations of the release.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// KubeConfig makes the release target a remote cluster. Combined with
	// ServiceAccountName, that account is impersonated on the remote
	// cluster; --default-service-account applies when it is empty.
	// +optional
	KubeConfig *meta.KubeConfigReference `json:"kubeConfig,omitempty"`

	// Suspend stops reconciliation; one already running completes.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// ReleaseName is the Helm release name. Default: [<targetNamespace>-]<name>,
	// shortened with a hash when longer than 53 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=53
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`

	// TargetNamespace is the namespace the release is installed in; the
	// HelmRelease's namespace when empty.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// StorageNamespace is where Helm keeps the release records; the
	// HelmRelease's namespace when empty.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	StorageNamespace string `json:"storageNamespace,omitempty"`

	// DependsOn lists HelmReleases that must be ready before this one is
	// reconciled.
	// +optional
	DependsOn []meta.DependencyReference `json:"dependsOn,omitempty"`

	// Timeout bounds each Kubernetes operation (such as hook Jobs) of a
	// Helm action. Default 5m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// MaxHistory is how many release revisions Helm keeps; 0 keeps all.
	// Default 5.
	// +optional
	MaxHistory *int `json:"maxHistory,omitempty"`

	// ServiceAccountName is the service account impersonated to apply the
	// release.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// PersistentClient reuses one Kubernetes client for a whole
	// reconciliation instead of one per Helm action step. Faster, but
	// charts that create CRDs outside Helm's CRD handling may not see them
	// in later hooks. Default true.
	// +optional
	PersistentClient *bool `json:"persistentClient,omitempty"`

	// DriftDetection configures detecting, and optionally correcting,
	// changes made in the cluster to the release's objects.
	// +optional
	DriftDetection *DriftDetection `json:"driftDetection,omitempty"`

	// Install configures Helm installs.
	// +optional
	Install *Install `json:"install,omitempty"`

	// Upgrade configures Helm upgrades.
	// +optional
	Upgrade *Upgrade `json:"upgrade,omitempty"`

	// Test configures Helm tests.
	// +optional
	Test *Test `json:"test,omitempty"`

	// Rollback configures Helm rollbacks.
	// +optional
	Rollback *Rollback `json:"rollback,omitempty"`

	// Uninstall configures Helm uninstalls.
	// +optional
	Uninstall *Uninstall `json:"uninstall,omitempty"`

	// ValuesFrom lists ConfigMap and Secret keys holding values, merged in
	// order; inline Values are merged on top.
	// +optional
	ValuesFrom []ValuesReference `json:"valuesFrom,omitempty"`

	// Values are inline Helm values.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Values *Values `json:"values,omitempty"`

	// PostRenderers transform the rendered manifests, in order.
	// +optional
	PostRenderers []PostRenderer `json:"postRenderers,omitempty"`

	// PostRenderStrategy says whether hooks go through the post-renderers:
	// nohooks, combined (default; nohooks with the UseHelm3Defaults
	// feature gate) or separate.
	// +kubebuilder:validation:Enum=nohooks;combined;separate
	// +optional
	PostRenderStrategy PostRenderStrategy `json:"postRenderStrategy,omitempty"`

	// CommonMetadata sets labels and annotations on every object of the
	// release.
	// +optional
	CommonMetadata *CommonMetadata `json:"commonMetadata,omitempty"`

	// WaitStrategy selects how Helm waits for objects to become ready.
	// +optional
	WaitStrategy *WaitStrategy `json:"waitStrategy,omitempty"`

	// HealthCheckExprs judge custom resources with CEL while waiting; only
	// used when waiting is on and the poller strategy is in use.
	// +optional
	HealthCheckExprs []meta.HealthCheckExpressions `json:"healthCheckExprs,omitempty"`
}

// ReleaseAction is the Helm action of a release attempt.
// +kubebuilder:validation:Enum=install;upgrade
type ReleaseAction string

const (
	// ReleaseActionInstall is a Helm install.
	ReleaseActionInstall ReleaseAction = "install"
	// ReleaseActionUpgrade is a Helm upgrade.
	ReleaseActionUpgrade ReleaseAction = "upgrade"
)

// HelmReleaseStatus is the observed state of a HelmRelease.
type HelmReleaseStatus struct {
	// ObservedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ObservedPostRenderersDigest is the digest of spec.postRenderers at the
	// last successful reconciliation.
	// +optional
	ObservedPostRenderersDigest string `json:"observedPostRenderersDigest,omitempty"`

	// ObservedCommonMetadataDigest is the digest of spec.commonMetadata at
	// the last successful reconciliation.
	// +optional
	ObservedCommonMetadataDigest string `json:"observedCommonMetadataDigest,omitempty"`

	// LastAttemptedGeneration is the last generation a reconciliation was
	// attempted for.
	// +optional
	LastAttemptedGeneration int64 `json:"lastAttemptedGeneration,omitempty"`

	// Conditions of the HelmRelease.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// HelmChart is <namespace>/<name> of the HelmChart created from
	// spec.chart.
	// +optional
	HelmChart string `json:"helmChart,omitempty"`

	// StorageNamespace is where Helm keeps the records of the current
	// release.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	StorageNamespace string `json:"storageNamespace,omitempty"`

	// History lists the releases made by the controller, newest first, up
	// to the last successful one.
	// +optional
	History Snapshots `json:"history,omitempty"`

	// Inventory lists the objects of the current release.
	// +optional
	Inventory *ResourceInventory `json:"inventory,omitempty"`

	// LastAttemptedReleaseAction is the action of the last release attempt;
	// it decides which retry and remediation settings are active.
	// +optional
	LastAttemptedReleaseAction ReleaseAction `json:"lastAttemptedReleaseAction,omitempty"`

	// LastAttemptedReleaseActionDuration is how long that action took.
	// +optional
	LastAttemptedReleaseActionDuration *metav1.Duration `json:"lastAttemptedReleaseActionDuration,omitempty"`

	// Failures counts failed reconciliations of the current desired state;
	// reset on success.
	// +optional
	Failures int64 `json:"failures,omitempty"`

	// InstallFailures counts failed installs of the current desired state;
	// reset on success.
	// +optional
	InstallFailures int64 `json:"installFailures,omitempty"`

	// UpgradeFailures counts failed upgrades of the current desired state;
	// reset on success.
	// +optional
	UpgradeFailures int64 `json:"upgradeFailures,omitempty"`

	// LastAttemptedRevision is the chart version of the last attempt; for
	// OCIRepository charts it carries the first 12 characters of the
	// artifact digest as build metadata (1.2.3+1234567890ab).
	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`

	// LastAttemptedRevisionDigest is the artifact digest of the last
	// attempt; OCIRepository charts only.
	// +optional
	LastAttemptedRevisionDigest string `json:"lastAttemptedRevisionDigest,omitempty"`

	// LastAttemptedValuesChecksum is the SHA-1 of the values of the last
	// attempt. Deprecated: use LastAttemptedConfigDigest.
	// +optional
	LastAttemptedValuesChecksum string `json:"lastAttemptedValuesChecksum,omitempty"`

	// LastReleaseRevision is the revision of the last successful release.
	// Deprecated: use History.
	// +optional
	LastReleaseRevision int `json:"lastReleaseRevision,omitempty"`

	// LastAttemptedConfigDigest is the digest of the values of the last
	// attempt.
	// +optional
	LastAttemptedConfigDigest string `json:"lastAttemptedConfigDigest,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
	meta.ForceRequestStatus     `json:",inline"`
	meta.ResetRequestStatus     `json:",inline"`
}

// ClearHistory empties the release history.
func (in *HelmReleaseStatus) ClearHistory() {
	in.History = nil
}

// ClearFailures resets every failure counter.
func (in *HelmReleaseStatus) ClearFailures() {
	in.Failures = 0
	in.InstallFailures = 0
	in.UpgradeFailures = 0
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=hr,categories=all;fluxcd;fluxcd-appliers
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"

// HelmRelease declares a Helm release the helm controller installs and
// keeps up to date.
type HelmRelease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HelmReleaseSpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status HelmReleaseStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// HelmReleaseList is a list of HelmRelease objects.
type HelmReleaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HelmRelease `json:"items"`
}

// GetConditions returns the status conditions.
func (in *HelmRelease) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *HelmRelease) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval.
func (in *HelmRelease) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetTimeout returns spec.timeout, or DefaultTimeout (5m) when unset.
func (in *HelmRelease) GetTimeout() time.Duration {
	return durationOr(in.Spec.Timeout, DefaultTimeout)
}

// GetDependsOn returns spec.dependsOn.
func (in *HelmRelease) GetDependsOn() []meta.DependencyReference {
	return in.Spec.DependsOn
}

// GetReleaseName returns spec.releaseName or, when empty, the default
// [<targetNamespace>-]<name>. A default longer than Helm's 53-character
// limit becomes its first 40 characters, a dash and the first 12 hex
// characters of the SHA-256 of the whole name.
func (in *HelmRelease) GetReleaseName() string {
	if in.Spec.ReleaseName != "" {
		return in.Spec.ReleaseName
	}
	name := in.Name
	if in.Spec.TargetNamespace != "" {
		name = in.Spec.TargetNamespace + "-" + in.Name
	}
	return shortenReleaseName(name)
}

func shortenReleaseName(name string) string {
	if len(name) <= maxReleaseNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:shortenedNamePrefixLen] + "-" + hex.EncodeToString(sum[:])[:shortenedNameHashLen]
}

// GetReleaseNamespace returns spec.targetNamespace, or the HelmRelease's
// namespace.
func (in *HelmRelease) GetReleaseNamespace() string {
	if in.Spec.TargetNamespace != "" {
		return in.Spec.TargetNamespace
	}
	return in.Namespace
}

// GetStorageNamespace returns spec.storageNamespace, or the HelmRelease's
// namespace.
func (in *HelmRelease) GetStorageNamespace() string {
	if in.Spec.StorageNamespace != "" {
		return in.Spec.StorageNamespace
	}
	return in.Namespace
}

// GetMaxHistory returns spec.maxHistory, or DefaultMaxHistory (5).
func (in *HelmRelease) GetMaxHistory() int {
	if in.Spec.MaxHistory == nil {
		return DefaultMaxHistory
	}
	return *in.Spec.MaxHistory
}

// UsePersistentClient returns spec.persistentClient; true when unset.
func (in *HelmRelease) UsePersistentClient() bool {
	return boolOr(in.Spec.PersistentClient, true)
}

// HasChartRef reports whether the chart comes from spec.chartRef.
func (in *HelmRelease) HasChartRef() bool {
	return in.Spec.ChartRef != nil
}

// HasChartTemplate reports whether the chart comes from spec.chart.
func (in *HelmRelease) HasChartTemplate() bool {
	return in.Spec.Chart != nil
}

// GetHelmChartName returns the name of the HelmChart created from
// spec.chart: <namespace>-<name>.
func (in *HelmRelease) GetHelmChartName() string {
	return in.Namespace + "-" + in.Name
}

// GetValues decodes spec.values; nil when unset.
func (in *HelmRelease) GetValues() (map[string]any, error) {
	return in.Spec.Values.AsMap()
}

// GetInstall returns spec.install, or its zero value.
func (in *HelmRelease) GetInstall() Install {
	if in.Spec.Install == nil {
		return Install{}
	}
	return *in.Spec.Install
}

// GetUpgrade returns spec.upgrade, or its zero value.
func (in *HelmRelease) GetUpgrade() Upgrade {
	if in.Spec.Upgrade == nil {
		return Upgrade{}
	}
	return *in.Spec.Upgrade
}

// GetTest returns spec.test, or its zero value.
func (in *HelmRelease) GetTest() Test {
	if in.Spec.Test == nil {
		return Test{}
	}
	return *in.Spec.Test
}

// GetRollback returns spec.rollback, or its zero value.
func (in *HelmRelease) GetRollback() Rollback {
	if in.Spec.Rollback == nil {
		return Rollback{}
	}
	return *in.Spec.Rollback
}

// GetUninstall returns spec.uninstall, or its zero value.
func (in *HelmRelease) GetUninstall() Uninstall {
	if in.Spec.Uninstall == nil {
		return Uninstall{}
	}
	return *in.Spec.Uninstall
}

// GetDriftDetection returns spec.driftDetection, or its zero value.
func (in *HelmRelease) GetDriftDetection() DriftDetection {
	if in.Spec.DriftDetection == nil {
		return DriftDetection{}
	}
	return *in.Spec.DriftDetection
}

// GetActiveRemediation returns the remediation settings of the last
// attempted action (upgrade, otherwise install), or nil when no release
// has been attempted yet.
func (in *HelmRelease) GetActiveRemediation() Remediation {
	switch in.Status.LastAttemptedReleaseAction {
	case ReleaseActionInstall:
		return in.GetInstall().GetRemediation()
	case ReleaseActionUpgrade:
		return in.GetUpgrade().GetRemediation()
	default:
		return nil
	}
}
