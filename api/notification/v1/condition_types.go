package v1

// ReceiverKind is the kind name of Receiver objects.
const ReceiverKind = "Receiver"

// Condition reasons of the notification controller, for Receivers and for
// the events it handles for Alerts and Providers.
const (
	// InitializedReason: the Receiver's webhook is set up and listening.
	InitializedReason = "Initialized"
	// ValidationFailedReason: part of the spec could not be validated.
	ValidationFailedReason = "ValidationFailed"
	// TokenNotFoundReason: the token Secret or its key is missing.
	TokenNotFoundReason = "TokenNotFound"
	// MigrationReason: an object is being moved to a newer, static API.
	MigrationReason = "Migration"
	// InvalidConfigReason: part of the configuration is unusable, such as an
	// invalid regular expression or CEL expression.
	InvalidConfigReason = "InvalidConfig"
	// NotificationDispatchFailedReason: sending to a provider failed.
	NotificationDispatchFailedReason = "NotificationDispatchFailed"
	// SourceFetchFailedReason: the object an event is about could not be
	// read to match an Alert's matchLabels.
	SourceFetchFailedReason = "SourceFetchFailed"
	// MetadataAppendFailedReason: metadata from different places had
	// conflicting keys.
	MetadataAppendFailedReason = "MetadataAppendFailed"
)
