package v2

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// DefaultRetryInterval is how long a RetryOnFailure strategy waits before
// trying a failed install or upgrade again, unless told otherwise.
const DefaultRetryInterval = 5 * time.Minute

// CRDsPolicy says what a Helm action does with the CRDs in a chart's crds/
// directory.
// +kubebuilder:validation:Enum=Skip;Create;CreateReplace
type CRDsPolicy string

const (
	// Skip leaves CRDs alone: none are created or replaced.
	Skip CRDsPolicy = "Skip"
	// Create creates missing CRDs and leaves existing ones unchanged.
	Create CRDsPolicy = "Create"
	// CreateReplace creates missing CRDs and replaces existing ones; none
	// are deleted.
	CreateReplace CRDsPolicy = "CreateReplace"
)

// ActionStrategyName names how the controller reacts to a failed install
// or upgrade.
type ActionStrategyName string

const (
	// ActionStrategyRemediateOnFailure remediates (uninstall or rollback)
	// and retries up to the remediation's retry count.
	ActionStrategyRemediateOnFailure ActionStrategyName = "RemediateOnFailure"
	// ActionStrategyRetryOnFailure leaves the failed release in place and
	// tries the action again after the retry interval.
	ActionStrategyRetryOnFailure ActionStrategyName = "RetryOnFailure"
)

// ServerSideApplyMode says whether upgrades and rollbacks apply objects
// server-side.
type ServerSideApplyMode string

const (
	// ServerSideApplyEnabled always applies server-side.
	ServerSideApplyEnabled ServerSideApplyMode = "enabled"
	// ServerSideApplyDisabled always applies client-side.
	ServerSideApplyDisabled ServerSideApplyMode = "disabled"
	// ServerSideApplyAuto applies the way the previous release did.
	ServerSideApplyAuto ServerSideApplyMode = "auto"
)

// Install configures the Helm install action.
type Install struct {
	// Timeout for each Kubernetes operation (such as hook Jobs) of the
	// install; spec.timeout when empty.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Remediation says what to do when the install fails; by default
	// nothing.
	// +optional
	Remediation *InstallRemediation `json:"remediation,omitempty"`

	// Strategy chooses between remediating and simply retrying a failed
	// install. RemediateOnFailure when empty (RetryOnFailure with the
	// DefaultToRetryOnFailure feature gate).
	// +optional
	Strategy *InstallStrategy `json:"strategy,omitempty"`

	// DisableTakeOwnership stops the install from adopting objects that
	// already exist in the cluster.
	// +optional
	DisableTakeOwnership bool `json:"disableTakeOwnership,omitempty"`

	// DisableWait skips waiting for the installed objects to become ready.
	// +optional
	DisableWait bool `json:"disableWait,omitempty"`

	// DisableWaitForJobs skips waiting for installed Jobs to complete.
	// +optional
	DisableWaitForJobs bool `json:"disableWaitForJobs,omitempty"`

	// DisableHooks skips the chart's install hooks.
	// +optional
	DisableHooks bool `json:"disableHooks,omitempty"`

	// DisableOpenAPIValidation skips validating the rendered objects
	// against the cluster's OpenAPI schema.
	// +optional
	DisableOpenAPIValidation bool `json:"disableOpenAPIValidation,omitempty"`

	// DisableSchemaValidation skips validating the values against the
	// chart's values.schema.json.
	// +optional
	DisableSchemaValidation bool `json:"disableSchemaValidation,omitempty"`

	// Replace lets the install reuse the release name of a deleted release
	// still kept in the history.
	// +optional
	Replace bool `json:"replace,omitempty"`

	// SkipCRDs skips installing CRDs. Deprecated: set CRDs to Skip.
	// +optional
	SkipCRDs bool `json:"skipCRDs,omitempty"`

	// CRDs is the CRD policy of the install: Skip, Create (default) or
	// CreateReplace. Helm itself never replaces CRDs.
	// +optional
	CRDs CRDsPolicy `json:"crds,omitempty"`

	// CreateNamespace creates the target namespace if missing; it is not
	// deleted on uninstall.
	// +optional
	CreateNamespace bool `json:"createNamespace,omitempty"`

	// ServerSideApply applies the objects server-side. True when unset
	// (false with the UseHelm3Defaults feature gate).
	// +optional
	ServerSideApply *bool `json:"serverSideApply,omitempty"`
}

// GetTimeout returns the install timeout, falling back to def.
func (in Install) GetTimeout(def time.Duration) time.Duration {
	return durationOr(in.Timeout, def)
}

// GetRemediation returns the install remediation settings, never nil.
func (in Install) GetRemediation() InstallRemediation {
	if in.Remediation == nil {
		return InstallRemediation{}
	}
	return *in.Remediation
}

// GetCRDsPolicy returns the CRD policy, honouring the deprecated SkipCRDs
// when CRDs is unset. The default is Create.
func (in Install) GetCRDsPolicy() CRDsPolicy {
	switch {
	case in.CRDs != "":
		return in.CRDs
	case in.SkipCRDs:
		return Skip
	default:
		return Create
	}
}

// InstallStrategy selects the failure strategy of installs.
// +kubebuilder:validation:XValidation:rule="!has(self.retryInterval) || self.name != 'RemediateOnFailure'",message=".retryInterval cannot be set when .name is 'RemediateOnFailure'"
type InstallStrategy struct {
	// Name of the strategy.
	// +kubebuilder:validation:Enum=RemediateOnFailure;RetryOnFailure
	// +required
	Name string `json:"name"`

	// RetryInterval is the wait before retrying a failed install; only
	// with RetryOnFailure. Default 5m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`
}

// GetRetryInterval returns RetryInterval or DefaultRetryInterval.
func (in InstallStrategy) GetRetryInterval() time.Duration {
	return durationOr(in.RetryInterval, DefaultRetryInterval)
}

// InstallRemediation configures what happens after a failed install.
type InstallRemediation struct {
	// Retries is how many times a failed install is retried, uninstalling
	// in between. 0 (default) means none; a negative value means no limit.
	// +optional
	Retries int `json:"retries,omitempty"`

	// IgnoreTestFailures keeps failed tests after an install from causing
	// remediation; spec.test.ignoreFailures when unset.
	// +optional
	IgnoreTestFailures *bool `json:"ignoreTestFailures,omitempty"`

	// RemediateLastFailure also remediates the failure that exhausted the
	// retries. Default false.
	// +optional
	RemediateLastFailure *bool `json:"remediateLastFailure,omitempty"`
}

// GetRetries returns the configured retry count.
func (in InstallRemediation) GetRetries() int { return in.Retries }

// MustIgnoreTestFailures says whether test failures after an install are
// ignored; def is spec.test.ignoreFailures.
func (in InstallRemediation) MustIgnoreTestFailures(def bool) bool {
	return boolOr(in.IgnoreTestFailures, def)
}

// MustRemediateLastFailure says whether the final failure is remediated.
func (in InstallRemediation) MustRemediateLastFailure() bool {
	return boolOr(in.RemediateLastFailure, false)
}

// GetStrategy returns the remediation strategy: always uninstall.
func (in InstallRemediation) GetStrategy() RemediationStrategy {
	return UninstallRemediationStrategy
}

// GetFailureCount returns the install failures recorded on hr.
func (in InstallRemediation) GetFailureCount(hr *HelmRelease) int64 {
	return hr.Status.InstallFailures
}

// IncrementFailureCount records one more install failure on hr.
func (in InstallRemediation) IncrementFailureCount(hr *HelmRelease) {
	hr.Status.InstallFailures++
}

// RetriesExhausted says whether hr has used up its install retries.
func (in InstallRemediation) RetriesExhausted(hr *HelmRelease) bool {
	return retriesExhausted(in.Retries, in.GetFailureCount(hr))
}

// Upgrade configures the Helm upgrade action.
type Upgrade struct {
	// Timeout for each Kubernetes operation (such as hook Jobs) of the
	// upgrade; spec.timeout when empty.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Remediation says what to do when the upgrade fails; by default
	// nothing.
	// +optional
	Remediation *UpgradeRemediation `json:"remediation,omitempty"`

	// Strategy chooses between remediating and simply retrying a failed
	// upgrade. RemediateOnFailure when empty (RetryOnFailure with the
	// DefaultToRetryOnFailure feature gate).
	// +optional
	Strategy *UpgradeStrategy `json:"strategy,omitempty"`

	// DisableTakeOwnership stops the upgrade from adopting objects that
	// already exist in the cluster.
	// +optional
	DisableTakeOwnership bool `json:"disableTakeOwnership,omitempty"`

	// DisableWait skips waiting for the upgraded objects to become ready.
	// +optional
	DisableWait bool `json:"disableWait,omitempty"`

	// DisableWaitForJobs skips waiting for Jobs to complete.
	// +optional
	DisableWaitForJobs bool `json:"disableWaitForJobs,omitempty"`

	// DisableHooks skips the chart's upgrade hooks.
	// +optional
	DisableHooks bool `json:"disableHooks,omitempty"`

	// DisableOpenAPIValidation skips validating the rendered objects
	// against the cluster's OpenAPI schema.
	// +optional
	DisableOpenAPIValidation bool `json:"disableOpenAPIValidation,omitempty"`

	// DisableSchemaValidation skips validating the values against the
	// chart's values.schema.json.
	// +optional
	DisableSchemaValidation bool `json:"disableSchemaValidation,omitempty"`

	// Force replaces objects instead of three-way merging them when
	// applying client-side; ignored with server-side apply.
	// +optional
	Force bool `json:"force,omitempty"`

	// PreserveValues reuses the previous release's values and merges the
	// declared ones on top. This makes the release depend on its history.
	// +optional
	PreserveValues bool `json:"preserveValues,omitempty"`

	// CleanupOnFail deletes objects the failed upgrade created.
	// +optional
	CleanupOnFail bool `json:"cleanupOnFail,omitempty"`

	// CRDs is the CRD policy of the upgrade: Skip (default), Create or
	// CreateReplace.
	// +optional
	CRDs CRDsPolicy `json:"crds,omitempty"`

	// ServerSideApply is enabled, disabled or auto (default: do what the
	// previous release did).
	// +kubebuilder:validation:Enum=enabled;disabled;auto
	// +optional
	ServerSideApply ServerSideApplyMode `json:"serverSideApply,omitempty"`

	// ChartNameChangeStrategy says what happens when the chart's name
	// changes: Reinstall (default) uninstalls and installs again,
	// InPlaceUpdate upgrades the existing release.
	// +kubebuilder:validation:Enum=InPlaceUpdate;Reinstall
	// +optional
	ChartNameChangeStrategy ChartNameChangeStrategy `json:"chartNameChangeStrategy,omitempty"`
}

// ChartNameChangeStrategy names what an upgrade does when the chart name
// differs from the installed one.
type ChartNameChangeStrategy string

const (
	// ChartNameChangeReinstall uninstalls the release and installs it anew.
	ChartNameChangeReinstall ChartNameChangeStrategy = "Reinstall"
	// ChartNameChangeInPlaceUpdate upgrades the release in place.
	ChartNameChangeInPlaceUpdate ChartNameChangeStrategy = "InPlaceUpdate"
)

// GetTimeout returns the upgrade timeout, falling back to def.
func (in Upgrade) GetTimeout(def time.Duration) time.Duration {
	return durationOr(in.Timeout, def)
}

// GetRemediation returns the upgrade remediation settings, never nil.
func (in Upgrade) GetRemediation() UpgradeRemediation {
	if in.Remediation == nil {
		return UpgradeRemediation{}
	}
	return *in.Remediation
}

// GetCRDsPolicy returns the CRD policy; Skip when unset.
func (in Upgrade) GetCRDsPolicy() CRDsPolicy {
	if in.CRDs == "" {
		return Skip
	}
	return in.CRDs
}

// GetServerSideApply returns the server-side apply mode; auto when unset.
func (in Upgrade) GetServerSideApply() ServerSideApplyMode {
	if in.ServerSideApply == "" {
		return ServerSideApplyAuto
	}
	return in.ServerSideApply
}

// GetChartNameChangeStrategy returns the strategy; Reinstall when unset.
func (in Upgrade) GetChartNameChangeStrategy() ChartNameChangeStrategy {
	if in.ChartNameChangeStrategy == "" {
		return ChartNameChangeReinstall
	}
	return in.ChartNameChangeStrategy
}

// UpgradeStrategy selects the failure strategy of upgrades.
// +kubebuilder:validation:XValidation:rule="!has(self.retryInterval) || self.name == 'RetryOnFailure'",message=".retryInterval can only be set when .name is 'RetryOnFailure'"
type UpgradeStrategy struct {
	// Name of the strategy.
	// +kubebuilder:validation:Enum=RemediateOnFailure;RetryOnFailure
	// +required
	Name string `json:"name"`

	// RetryInterval is the wait before retrying a failed upgrade; only
	// with RetryOnFailure. Default 5m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`
}

// GetRetryInterval returns RetryInterval or DefaultRetryInterval.
func (in UpgradeStrategy) GetRetryInterval() time.Duration {
	return durationOr(in.RetryInterval, DefaultRetryInterval)
}

// RemediationStrategy is how a failed upgrade is undone.
// +kubebuilder:validation:Enum=rollback;uninstall
type RemediationStrategy string

const (
	// RollbackRemediationStrategy rolls back to the previous release.
	RollbackRemediationStrategy RemediationStrategy = "rollback"
	// UninstallRemediationStrategy uninstalls the release.
	UninstallRemediationStrategy RemediationStrategy = "uninstall"
)

// UpgradeRemediation configures what happens after a failed upgrade.
type UpgradeRemediation struct {
	// Retries is how many times a failed upgrade is retried, remediating
	// in between. 0 (default) means none; a negative value means no limit.
	// +optional
	Retries int `json:"retries,omitempty"`

	// IgnoreTestFailures keeps failed tests after an upgrade from causing
	// remediation; spec.test.ignoreFailures when unset.
	// +optional
	IgnoreTestFailures *bool `json:"ignoreTestFailures,omitempty"`

	// RemediateLastFailure also remediates the failure that exhausted the
	// retries. Default: true when Retries > 0, false otherwise.
	// +optional
	RemediateLastFailure *bool `json:"remediateLastFailure,omitempty"`

	// Strategy is rollback (default) or uninstall.
	// +optional
	Strategy *RemediationStrategy `json:"strategy,omitempty"`
}

// GetRetries returns the configured retry count.
func (in UpgradeRemediation) GetRetries() int { return in.Retries }

// MustIgnoreTestFailures says whether test failures after an upgrade are
// ignored; def is spec.test.ignoreFailures.
func (in UpgradeRemediation) MustIgnoreTestFailures(def bool) bool {
	return boolOr(in.IgnoreTestFailures, def)
}

// MustRemediateLastFailure says whether the final failure is remediated.
func (in UpgradeRemediation) MustRemediateLastFailure() bool {
	return boolOr(in.RemediateLastFailure, in.Retries > 0)
}

// GetStrategy returns the remediation strategy; rollback when unset.
func (in UpgradeRemediation) GetStrategy() RemediationStrategy {
	if in.Strategy == nil {
		return RollbackRemediationStrategy
	}
	return *in.Strategy
}

// GetFailureCount returns the upgrade failures recorded on hr.
func (in UpgradeRemediation) GetFailureCount(hr *HelmRelease) int64 {
	return hr.Status.UpgradeFailures
}

// IncrementFailureCount records one more upgrade failure on hr.
func (in UpgradeRemediation) IncrementFailureCount(hr *HelmRelease) {
	hr.Status.UpgradeFailures++
}

// RetriesExhausted says whether hr has used up its upgrade retries.
func (in UpgradeRemediation) RetriesExhausted(hr *HelmRelease) bool {
	return retriesExhausted(in.Retries, in.GetFailureCount(hr))
}

// Remediation is what InstallRemediation and UpgradeRemediation have in
// common, so the controller can treat the active one alike.
//
// +kubebuilder:object:generate=false
type Remediation interface {
	GetRetries() int
	MustIgnoreTestFailures(def bool) bool
	MustRemediateLastFailure() bool
	GetStrategy() RemediationStrategy
	GetFailureCount(hr *HelmRelease) int64
	IncrementFailureCount(hr *HelmRelease)
	RetriesExhausted(hr *HelmRelease) bool
}

// Test configures the Helm test action.
type Test struct {
	// Enable runs the chart's tests after every successful install or
	// upgrade.
	// +optional
	Enable bool `json:"enable,omitempty"`

	// Timeout for each Kubernetes operation of the tests; spec.timeout
	// when empty.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// IgnoreFailures keeps failed tests from failing the release and
	// causing remediation. Install and upgrade remediation can override it.
	// +optional
	IgnoreFailures bool `json:"ignoreFailures,omitempty"`

	// Filters select tests by name to run or to skip.
	// +optional
	Filters []Filter `json:"filters,omitempty"`
}

// GetTimeout returns the test timeout, falling back to def.
func (in Test) GetTimeout(def time.Duration) time.Duration {
	return durationOr(in.Timeout, def)
}

// Filter includes or excludes one Helm test by name.
type Filter struct {
	// Name of the test.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Exclude skips the named test instead of selecting it.
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// Rollback configures the Helm rollback action used for remediation.
type Rollback struct {
	// Timeout for each Kubernetes operation (such as hook Jobs) of the
	// rollback; spec.timeout when empty.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// DisableWait skips waiting for the objects to become ready.
	// +optional
	DisableWait bool `json:"disableWait,omitempty"`

	// DisableWaitForJobs skips waiting for Jobs to complete.
	// +optional
	DisableWaitForJobs bool `json:"disableWaitForJobs,omitempty"`

	// DisableHooks skips the chart's rollback hooks.
	// +optional
	DisableHooks bool `json:"disableHooks,omitempty"`

	// Recreate restarted pods in Helm 3. Deprecated: it has no effect with
	// the Helm 4 SDK and only produces a warning.
	// +optional
	Recreate bool `json:"recreate,omitempty"`

	// Force replaces objects instead of three-way merging them when
	// applying client-side; ignored with server-side apply.
	// +optional
	Force bool `json:"force,omitempty"`

	// CleanupOnFail deletes objects created by a failed rollback.
	// +optional
	CleanupOnFail bool `json:"cleanupOnFail,omitempty"`

	// ServerSideApply is enabled, disabled or auto (default: do what the
	// release rolled back to did).
	// +kubebuilder:validation:Enum=enabled;disabled;auto
	// +optional
	ServerSideApply ServerSideApplyMode `json:"serverSideApply,omitempty"`
}

// GetTimeout returns the rollback timeout, falling back to def.
func (in Rollback) GetTimeout(def time.Duration) time.Duration {
	return durationOr(in.Timeout, def)
}

// DeletionPropagation values for Uninstall.
const (
	DeletionPropagationBackground = "background"
	DeletionPropagationForeground = "foreground"
	DeletionPropagationOrphan     = "orphan"
)

// Uninstall configures the Helm uninstall action.
type Uninstall struct {
	// Timeout for each Kubernetes operation (such as hook Jobs) of the
	// uninstall; spec.timeout when empty.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// DisableHooks skips the chart's delete hooks.
	// +optional
	DisableHooks bool `json:"disableHooks,omitempty"`

	// KeepHistory deletes the objects but keeps the release history,
	// marking the release as uninstalled.
	// +optional
	KeepHistory bool `json:"keepHistory,omitempty"`

	// DisableWait skips waiting for the objects to be gone.
	// +optional
	DisableWait bool `json:"disableWait,omitempty"`

	// DeletionPropagation is the propagation policy of the deletes:
	// background (default), foreground or orphan.
	// +kubebuilder:validation:Enum=background;foreground;orphan
	// +kubebuilder:default=background
	// +optional
	DeletionPropagation *string `json:"deletionPropagation,omitempty"`
}

// GetTimeout returns the uninstall timeout, falling back to def.
func (in Uninstall) GetTimeout(def time.Duration) time.Duration {
	return durationOr(in.Timeout, def)
}

// GetDeletionPropagation returns the propagation policy; background when
// unset.
func (in Uninstall) GetDeletionPropagation() string {
	if in.DeletionPropagation == nil || *in.DeletionPropagation == "" {
		return DeletionPropagationBackground
	}
	return *in.DeletionPropagation
}

// DriftDetectionMode says whether drift is ignored, reported or corrected.
// +kubebuilder:validation:Enum=enabled;warn;disabled
type DriftDetectionMode string

const (
	// DriftDetectionEnabled detects and corrects drift.
	DriftDetectionEnabled DriftDetectionMode = "enabled"
	// DriftDetectionWarn detects drift and reports it without correcting.
	DriftDetectionWarn DriftDetectionMode = "warn"
	// DriftDetectionDisabled does not look for drift.
	DriftDetectionDisabled DriftDetectionMode = "disabled"
)

// DriftDetection configures comparing the release's cluster objects with
// the manifest in Helm's storage (a server-side apply dry run).
type DriftDetection struct {
	// Mode is enabled, warn or disabled (default).
	// +optional
	Mode DriftDetectionMode `json:"mode,omitempty"`

	// Ignore lists fields, by JSON pointer, to leave out of the comparison.
	// +optional
	Ignore []meta.IgnoreRule `json:"ignore,omitempty"`
}

// GetMode returns the drift detection mode; disabled when unset.
func (in DriftDetection) GetMode() DriftDetectionMode {
	if in.Mode == "" {
		return DriftDetectionDisabled
	}
	return in.Mode
}

// PostRenderer transforms the manifests Helm renders before they are
// applied.
type PostRenderer struct {
	// Kustomize patches and retags the rendered objects.
	// +optional
	Kustomize *Kustomize `json:"kustomize,omitempty"`
}

// Kustomize is a post-renderer built from kustomize patches and image
// overrides.
type Kustomize struct {
	// Patches are strategic-merge or JSON 6902 patches, each applied to the
	// objects its target selects.
	// +optional
	Patches []meta.Patch `json:"patches,omitempty"`

	// Images override container image names, tags or digests.
	// +optional
	Images []meta.Image `json:"images,omitempty"`
}

// PostRenderStrategy says whether chart hooks go through post-renderers.
type PostRenderStrategy string

const (
	// PostRenderStrategyNoHooks post-renders templates only, not hooks
	// (Helm 3 behaviour).
	PostRenderStrategyNoHooks PostRenderStrategy = "nohooks"
	// PostRenderStrategyCombined post-renders hooks and templates as one
	// stream (Helm 4 default).
	PostRenderStrategyCombined PostRenderStrategy = "combined"
	// PostRenderStrategySeparate post-renders hooks and templates as two
	// streams.
	PostRenderStrategySeparate PostRenderStrategy = "separate"
)

// CommonMetadata are labels and annotations put on every object of the
// release, overriding any with the same key.
type CommonMetadata struct {
	// Annotations to set on every object.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels to set on every object.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// WaitStrategyName names how Helm waits for objects to become ready.
type WaitStrategyName string

const (
	// WaitStrategyPoller polls object status the kstatus way; the default.
	WaitStrategyPoller WaitStrategyName = "poller"
	// WaitStrategyLegacy uses Helm 3's built-in readiness checks.
	WaitStrategyLegacy WaitStrategyName = "legacy"
)

// WaitStrategy selects how Helm waits for applied objects.
type WaitStrategy struct {
	// Name is poller (default; legacy with the UseHelm3Defaults feature
	// gate) or legacy.
	// +kubebuilder:validation:Enum=poller;legacy
	// +required
	Name WaitStrategyName `json:"name"`
}

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// retriesExhausted treats a negative retry count as unlimited.
func retriesExhausted(retries int, failures int64) bool {
	return retries >= 0 && failures > int64(retries)
}
