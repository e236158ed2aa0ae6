package v1

// Labels the controller puts on every object it applies, naming the
// Kustomization that owns the object. `flux trace` and `flux tree` follow them.
const (
	// NameLabel holds the owning Kustomization's name.
	NameLabel = "kustomize.toolkit.fluxcd.io/name"
	// NamespaceLabel holds the owning Kustomization's namespace.
	NamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// Annotations (or labels) a manifest can carry to change how the controller
// treats that one object. Values are compared exactly as Flux compares them:
// "substitute: disabled" is case-sensitive; the constants below are spelled
// as Flux documents them.
const (
	// SSAAnnotation picks the server-side apply policy for the object; see
	// the SSA* values.
	SSAAnnotation = "kustomize.toolkit.fluxcd.io/ssa"

	// ForceAnnotation set to EnabledValue makes the controller delete and
	// recreate the object when an apply fails on an immutable field, even if
	// spec.force is false.
	ForceAnnotation = "kustomize.toolkit.fluxcd.io/force"

	// PruneAnnotation set to DisabledValue keeps the object in the cluster
	// when it leaves the build or the Kustomization is deleted.
	PruneAnnotation = "kustomize.toolkit.fluxcd.io/prune"

	// ReconcileAnnotation set to ReconcileDisabledValue on the in-cluster
	// object makes the controller stop applying and pruning it.
	ReconcileAnnotation = "kustomize.toolkit.fluxcd.io/reconcile"

	// SubstituteAnnotation set to SubstituteDisabledValue excludes the object
	// from post-build variable substitution. Every Flux CRD carries it, so
	// that ${...} in CEL rules and descriptions survives.
	SubstituteAnnotation = "kustomize.toolkit.fluxcd.io/substitute"

	// DecryptAnnotation set to DisabledValue leaves an encrypted object as it
	// is instead of decrypting it with spec.decryption.
	DecryptAnnotation = "kustomize.toolkit.fluxcd.io/decrypt"
)

// Values of SSAAnnotation.
const (
	// SSAOverride is the default: the object is applied as in the manifest,
	// taking over fields other managers changed.
	SSAOverride = "Override"
	// SSAMerge applies the object but keeps fields that other field managers
	// added.
	SSAMerge = "Merge"
	// SSAIfNotPresent creates the object only when it is missing and never
	// updates it afterwards.
	SSAIfNotPresent = "IfNotPresent"
	// SSAIgnore leaves the object out of the apply, so in-cluster changes to
	// it are never reverted.
	SSAIgnore = "Ignore"
)

// Values of the on/off annotations above.
const (
	// EnabledValue turns ForceAnnotation on.
	EnabledValue = "Enabled"
	// DisabledValue turns PruneAnnotation and DecryptAnnotation off.
	DisabledValue = "Disabled"
	// ReconcileDisabledValue is the documented spelling for
	// ReconcileAnnotation.
	ReconcileDisabledValue = "disabled"
	// SubstituteDisabledValue is the documented spelling for
	// SubstituteAnnotation.
	SubstituteDisabledValue = "disabled"
)
