package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Values of spec.reconcileStrategy of a HelmChart.
const (
	// ReconcileStrategyChartVersion packages a new artifact only when the
	// chart's version changes; the default.
	ReconcileStrategyChartVersion string = "ChartVersion"
	// ReconcileStrategyRevision packages a new artifact whenever the
	// source's revision changes (GitRepository and Bucket sources).
	ReconcileStrategyRevision string = "Revision"
)

// HelmChartSpec says which chart to fetch or package, from which source.
// +kubebuilder:validation:XValidation:rule="!has(self.verify) || self.sourceRef.kind == 'HelmRepository'",message="spec.verify is only supported when spec.sourceRef.kind is 'HelmRepository'"
type HelmChartSpec struct {
	// Chart is the chart's name in a HelmRepository, or its directory in a
	// GitRepository or Bucket artifact.
	// +required
	Chart string `json:"chart"`

	// Version is a semver range the chart version must satisfy; "*" (the
	// newest) by default. Ignored for GitRepository and Bucket sources.
	// +kubebuilder:default="*"
	// +optional
	Version string `json:"version,omitempty"`

	// SourceRef names the source holding the chart, in the same namespace.
	// +required
	SourceRef LocalHelmChartSourceReference `json:"sourceRef"`

	// Interval between two checks of the source for a new chart. The
	// controller may add a little jitter.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// ReconcileStrategy says what makes a new artifact: ChartVersion (a
	// new chart version, the default) or Revision (a new source revision).
	// +kubebuilder:validation:Enum=ChartVersion;Revision
	// +kubebuilder:default=ChartVersion
	// +optional
	ReconcileStrategy string `json:"reconcileStrategy,omitempty"`

	// ValuesFiles are paths in the source of values files merged, later
	// ones winning, into the chart's values.yaml when packaging. The
	// chart's own values.yaml is not included unless listed.
	// +optional
	ValuesFiles []string `json:"valuesFiles,omitempty"`

	// IgnoreMissingValuesFiles skips values files that do not exist instead
	// of failing.
	// +optional
	IgnoreMissingValuesFiles bool `json:"ignoreMissingValuesFiles,omitempty"`

	// Suspend stops reconciliation while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Verify checks the chart's signature; only for charts pulled from an
	// OCI HelmRepository. Dependencies not bundled in the chart are not
	// checked.
	// +optional
	Verify *OCIVerification `json:"verify,omitempty"`
}

// LocalHelmChartSourceReference names the source of a chart in the
// HelmChart's namespace.
type LocalHelmChartSourceReference struct {
	// APIVersion of the source.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the source: HelmRepository, GitRepository or Bucket.
	// +kubebuilder:validation:Enum=HelmRepository;GitRepository;Bucket
	// +required
	Kind string `json:"kind"`

	// Name of the source.
	// +required
	Name string `json:"name"`
}

// HelmChartStatus is what the controller last observed and stored.
type HelmChartStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ObservedSourceArtifactRevision is the source artifact revision the
	// chart was last taken from.
	// +optional
	ObservedSourceArtifactRevision string `json:"observedSourceArtifactRevision,omitempty"`

	// ObservedChartName is the chart name last resolved.
	// +optional
	ObservedChartName string `json:"observedChartName,omitempty"`

	// ObservedValuesFiles are the values files merged into the stored
	// chart.
	// +optional
	ObservedValuesFiles []string `json:"observedValuesFiles,omitempty"`

	// Conditions of the object.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// URL is a convenience download link for the latest chart; use
	// Artifact for anything that needs to be exact.
	// +optional
	URL string `json:"url,omitempty"`

	// Artifact is the stored chart package (<name>-<version>.tgz).
	// +optional
	Artifact *meta.Artifact `json:"artifact,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=hc,categories=all;fluxcd;fluxcd-sources
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Chart",type=string,JSONPath=`.spec.chart`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Source Kind",type=string,JSONPath=`.spec.sourceRef.kind`
// +kubebuilder:printcolumn:name="Source Name",type=string,JSONPath=`.spec.sourceRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// HelmChart fetches a chart from a HelmRepository, or packages one from a
// GitRepository or Bucket, and stores it as an artifact for HelmReleases.
type HelmChart struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HelmChartSpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status HelmChartStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *HelmChart) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *HelmChart) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval.
func (in *HelmChart) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetArtifact returns the stored chart, or nil.
func (in *HelmChart) GetArtifact() *meta.Artifact {
	return in.Status.Artifact
}

// GetValuesFiles returns spec.valuesFiles.
func (in *HelmChart) GetValuesFiles() []string {
	return in.Spec.ValuesFiles
}

// +kubebuilder:object:root=true

// HelmChartList is a list of HelmCharts.
type HelmChartList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HelmChart `json:"items"`
}
