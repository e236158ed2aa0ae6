package v1

// Kind names of the group, as they appear in `kind:` and in the sourceRef of
// consumers.
const (
	GitRepositoryKind    string = "GitRepository"
	OCIRepositoryKind    string = "OCIRepository"
	BucketKind           string = "Bucket"
	HelmRepositoryKind   string = "HelmRepository"
	HelmChartKind        string = "HelmChart"
	ExternalArtifactKind string = "ExternalArtifact"
)

// Condition types the source kinds report besides meta.ReadyCondition,
// meta.ReconcilingCondition and meta.StalledCondition. All but
// ArtifactInStorage and SourceVerified are "abnormal-true": they appear only
// while True and are removed once the problem is gone.
const (
	// ArtifactInStorageCondition is True once an artifact for the object sits
	// in storage and can be downloaded. It is absent until the first one is
	// stored.
	ArtifactInStorageCondition string = "ArtifactInStorage"

	// ArtifactOutdatedCondition is True while the stored artifact lags behind
	// what the object now asks for (a new upstream revision, a changed spec).
	ArtifactOutdatedCondition string = "ArtifactOutdated"

	// SourceVerifiedCondition reports the result of signature verification;
	// it is present only when the object asks for verification.
	SourceVerifiedCondition string = "SourceVerified"

	// FetchFailedCondition is True when getting the upstream content failed,
	// so the stored artifact, if any, may be stale.
	FetchFailedCondition string = "FetchFailed"

	// BuildFailedCondition is True when turning fetched content into an
	// artifact (packaging a chart, for example) failed.
	BuildFailedCondition string = "BuildFailed"

	// StorageOperationFailedCondition is True when a filesystem operation on
	// the artifact storage failed.
	StorageOperationFailedCondition string = "StorageOperationFailed"

	// IncludeUnavailableCondition is True when a GitRepository's include
	// points at a repository that is missing or has no artifact yet.
	IncludeUnavailableCondition string = "IncludeUnavailable"
)

// Reasons shared by the source kinds. They explain a condition to people and
// tools; only the condition types are part of the declarative contract.
const (
	// URLInvalidReason: the URL in the spec cannot be used.
	URLInvalidReason string = "URLInvalid"

	// AuthenticationFailedReason: the referenced credentials are missing,
	// malformed or refused by the server.
	AuthenticationFailedReason string = "AuthenticationFailed"

	// VerificationError: signature verification did not succeed. Flux spells
	// this reason without the usual "Reason" suffix, and so do we.
	VerificationError string = "VerificationError"

	// DirCreationFailedReason: a directory in storage could not be created.
	DirCreationFailedReason string = "DirectoryCreationFailed"

	// StatOperationFailedReason: a path in storage could not be stat'ed.
	StatOperationFailedReason string = "StatOperationFailed"

	// ReadOperationFailedReason: a file could not be read.
	ReadOperationFailedReason string = "ReadOperationFailed"

	// AcquireLockFailedReason: the storage lock for the artifact could not
	// be taken.
	AcquireLockFailedReason string = "AcquireLockFailed"

	// InvalidPathReason: a path given in the spec is not usable.
	InvalidPathReason string = "InvalidPath"

	// ArchiveOperationFailedReason: packing the content into a tarball failed.
	ArchiveOperationFailedReason string = "ArchiveOperationFailed"

	// SymlinkUpdateFailedReason: the "latest" symlink in storage could not
	// be moved to the new artifact.
	SymlinkUpdateFailedReason string = "SymlinkUpdateFailed"

	// ArtifactUpToDateReason: the stored artifact already matches upstream.
	ArtifactUpToDateReason string = "ArtifactUpToDate"

	// CacheOperationFailedReason: reading or writing the in-memory cache
	// (Helm indexes) failed.
	CacheOperationFailedReason string = "CacheOperationFailed"

	// PatchOperationFailedReason: writing the object's status back failed.
	PatchOperationFailedReason string = "PatchOperationFailed"

	// InvalidSTSConfigurationReason: a Bucket's spec.sts cannot be used with
	// its provider.
	InvalidSTSConfigurationReason string = "InvalidSTSConfiguration"

	// InvalidProviderConfigurationReason: the provider settings (for
	// example the Secret a provider needs) are incomplete or contradictory.
	InvalidProviderConfigurationReason string = "InvalidProviderConfiguration"

	// NewRevisionReason goes with ArtifactOutdated when upstream moved on.
	NewRevisionReason string = "NewRevision"

	// NewChartReason goes with ArtifactOutdated when a HelmChart resolves to
	// a chart version that has not been packaged yet.
	NewChartReason string = "NewChart"
)

// Reasons specific to one kind.
const (
	// GitOperationSucceedReason: clone and checkout worked. The constant name
	// follows Flux's; the value is the past tense.
	GitOperationSucceedReason string = "GitOperationSucceeded"

	// GitOperationFailedReason: clone, fetch or checkout failed.
	GitOperationFailedReason string = "GitOperationFailed"

	// OCIPullFailedReason: pulling the OCI artifact failed.
	OCIPullFailedReason string = "OCIArtifactPullFailed"

	// OCILayerOperationFailedReason: extracting or copying the selected
	// layer failed.
	OCILayerOperationFailedReason string = "OCIArtifactLayerOperationFailed"

	// BucketOperationSucceededReason: listing and downloading objects worked.
	BucketOperationSucceededReason string = "BucketOperationSucceeded"

	// BucketOperationFailedReason: listing or downloading objects failed.
	BucketOperationFailedReason string = "BucketOperationFailed"

	// IndexationFailedReason: a HelmRepository index could not be fetched
	// or parsed.
	IndexationFailedReason string = "IndexationFailed"

	// ChartPullSucceededReason: a chart was downloaded from a repository.
	ChartPullSucceededReason string = "ChartPullSucceeded"

	// ChartPackageSucceededReason: a chart was packaged from a directory in
	// a GitRepository or Bucket artifact.
	ChartPackageSucceededReason string = "ChartPackageSucceeded"
)
