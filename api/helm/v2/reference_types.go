package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// CrossNamespaceObjectReference names the source (HelmRepository,
// GitRepository or Bucket) a chart template takes its chart from.
type CrossNamespaceObjectReference struct {
	// APIVersion of the source; the served version of its kind when empty.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the source.
	// +kubebuilder:validation:Enum=HelmRepository;GitRepository;Bucket
	// +required
	Kind string `json:"kind"`

	// Name of the source.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Namespace of the source; the HelmRelease's namespace when empty.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// CrossNamespaceSourceReference names an object whose artifact is the
// packaged chart itself: an OCIRepository, a HelmChart or an
// ExternalArtifact.
type CrossNamespaceSourceReference struct {
	// APIVersion of the referent; the served version of its kind when empty.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the referent.
	// +kubebuilder:validation:Enum=OCIRepository;HelmChart;ExternalArtifact
	// +required
	Kind string `json:"kind"`

	// Name of the referent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Namespace of the referent; the HelmRelease's namespace when empty.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ValuesReference points at a ConfigMap or Secret key that holds Helm
// values, and says where in the values tree they go.
type ValuesReference struct {
	// Kind of the object holding the values.
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	// +required
	Kind string `json:"kind"`

	// Name of the object, in the HelmRelease's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// ValuesKey is the data key to read; "values.yaml" when empty.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[\-._a-zA-Z0-9]+$`
	// +optional
	ValuesKey string `json:"valuesKey,omitempty"`

	// TargetPath places the value at this path of the values tree, written
	// as for `helm --set`; the key must then hold a single value. When
	// empty the key holds a YAML document merged at the root.
	// +kubebuilder:validation:MaxLength=250
	// +kubebuilder:validation:Pattern=`^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$`
	// +optional
	TargetPath string `json:"targetPath,omitempty"`

	// Optional makes a missing ConfigMap or Secret acceptable. A missing
	// key, a bad target path or any other error still fails.
	// +optional
	Optional bool `json:"optional,omitempty"`

	// Literal, together with TargetPath, sets the value verbatim as
	// `helm --set-literal` would, so commas, dots, brackets and equal
	// signs in it are not interpreted. It has no effect without TargetPath.
	// +optional
	Literal bool `json:"literal,omitempty"`
}

// GetValuesKey returns ValuesKey, or "values.yaml" when it is empty.
func (in ValuesReference) GetValuesKey() string {
	if in.ValuesKey == "" {
		return DefaultValuesKey
	}
	return in.ValuesKey
}

// DefaultValuesKey is the data key a ValuesReference reads by default.
const DefaultValuesKey = "values.yaml"

// HelmChartTemplate describes the HelmChart object the controller creates
// (named <namespace>-<name>, in the source's namespace) to have the source
// controller package the chart.
type HelmChartTemplate struct {
	// ObjectMeta holds labels and annotations for the HelmChart.
	// +optional
	ObjectMeta *HelmChartTemplateObjectMeta `json:"metadata,omitempty"`

	// Spec of the HelmChart.
	// +required
	Spec HelmChartTemplateSpec `json:"spec"`
}

// HelmChartTemplateObjectMeta is the subset of object metadata a chart
// template may set.
type HelmChartTemplateObjectMeta struct {
	// Labels of the HelmChart.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations of the HelmChart.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// HelmChartTemplateSpec mirrors the spec of a source.toolkit.fluxcd.io
// HelmChart.
type HelmChartTemplateSpec struct {
	// Chart is the chart name in a Helm repository, or its path in a Git
	// repository or bucket.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +required
	Chart string `json:"chart"`

	// Version is a semver range the chart version must satisfy; the newest
	// match wins. Only used with HelmRepository sources. Default "*".
	// +kubebuilder:default:=*
	// +optional
	Version string `json:"version,omitempty"`

	// SourceRef names the source holding the chart.
	// +required
	SourceRef CrossNamespaceObjectReference `json:"sourceRef"`

	// Interval at which the HelmChart checks its source; spec.interval of
	// the HelmRelease when empty.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// ReconcileStrategy decides what produces a new chart artifact: a new
	// chart version (ChartVersion, the default) or any new source revision
	// (Revision).
	// +kubebuilder:validation:Enum=ChartVersion;Revision
	// +kubebuilder:default:=ChartVersion
	// +optional
	ReconcileStrategy string `json:"reconcileStrategy,omitempty"`

	// ValuesFiles are paths, relative to the source root, of values files
	// merged in order (later ones win) to replace the chart's values.yaml.
	// +optional
	ValuesFiles []string `json:"valuesFiles,omitempty"`

	// IgnoreMissingValuesFiles skips ValuesFiles entries that do not exist
	// instead of failing.
	// +optional
	IgnoreMissingValuesFiles bool `json:"ignoreMissingValuesFiles,omitempty"`

	// Verify checks the signature of charts pulled from OCI registries.
	// Dependencies not bundled in the chart are not verified.
	// +optional
	Verify *HelmChartTemplateVerification `json:"verify,omitempty"`
}

// GetInterval returns the HelmChart interval, falling back to def.
func (in HelmChartTemplateSpec) GetInterval(def metav1.Duration) metav1.Duration {
	if in.Interval == nil {
		return def
	}
	return *in.Interval
}

// HelmChartTemplateVerification configures OCI chart signature checks.
type HelmChartTemplateVerification struct {
	// Provider is the signing technology: cosign (default) or notation.
	// +kubebuilder:validation:Enum=cosign;notation
	// +kubebuilder:default:=cosign
	// +required
	Provider string `json:"provider"`

	// SecretRef names a Secret holding the trusted public keys or
	// certificates. Without it cosign verifies keyless signatures.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`
}

// Kinds a HelmRelease may refer to.
const (
	HelmRepositoryKind   = "HelmRepository"
	GitRepositoryKind    = "GitRepository"
	BucketKind           = "Bucket"
	OCIRepositoryKind    = "OCIRepository"
	HelmChartKind        = "HelmChart"
	ExternalArtifactKind = "ExternalArtifact"
	ConfigMapKind        = "ConfigMap"
	SecretKind           = "Secret"
)

// Reconcile strategies of a chart template.
const (
	ReconcileStrategyChartVersion = "ChartVersion"
	ReconcileStrategyRevision     = "Revision"
)
