package v1beta1

// ArtifactGeneratorKind is the kind name of ArtifactGenerator objects.
const ArtifactGeneratorKind = "ArtifactGenerator"

// Names source-watcher puts on objects, spelled as Flux spells them.
const (
	// Finalizer is the finalizer on ArtifactGenerators; unlike the other
	// controllers' it is not meta.Finalizer.
	Finalizer = "source.extensions.fluxcd.io/finalizer"

	// GeneratorLabel is set on each generated ExternalArtifact; its value
	// identifies the ArtifactGenerator that owns it.
	GeneratorLabel = "source.extensions.fluxcd.io/generator"

	// ReconcileAnnotation set to DisabledValue (any case) pauses an
	// ArtifactGenerator.
	ReconcileAnnotation = "source.extensions.fluxcd.io/reconcile"

	// OriginRevisionAnnotation is the artifact metadata key that
	// spec.artifacts[].originRevision fills in.
	OriginRevisionAnnotation = "org.opencontainers.image.revision"
)

// Values of ReconcileAnnotation.
const (
	EnabledValue  = "enabled"
	DisabledValue = "disabled"
)

// Condition reasons specific to ArtifactGenerators; the generic ones live
// in api/meta.
const (
	// ReconciliationDisabledReason: ReconcileAnnotation pauses the object.
	ReconciliationDisabledReason = "ReconciliationDisabled"
	// AccessDeniedReason: a source in another namespace may not be used.
	AccessDeniedReason = "AccessDenied"
	// ValidationFailedReason: the spec is inconsistent, e.g. duplicate
	// aliases or a copy from an unknown alias.
	ValidationFailedReason = "ValidationFailed"
	// SourceFetchFailedReason: a source or its artifact could not be read.
	SourceFetchFailedReason = "SourceFetchFailed"
)

// Values of spec.artifacts[].copy[].strategy.
const (
	// OverwriteStrategy, the default, replaces files already at the
	// destination.
	OverwriteStrategy = "Overwrite"
	// MergeStrategy deep-merges YAML files into the one at the destination,
	// the way Helm merges values files.
	MergeStrategy = "Merge"
	// ExtractStrategy unpacks tarballs (.tar.gz, .tgz) into the destination.
	ExtractStrategy = "Extract"
)

// Values of spec.sources[].kind.
const (
	BucketKind           = "Bucket"
	GitRepositoryKind    = "GitRepository"
	OCIRepositoryKind    = "OCIRepository"
	HelmChartKind        = "HelmChart"
	ExternalArtifactKind = "ExternalArtifact"
)

// ArtifactAlias is the alias that names the generated artifact in the "to"
// of a copy operation (@artifact/...).
const ArtifactAlias = "artifact"
