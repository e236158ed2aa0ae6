package imageupdateautomation

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"k8s.io/apimachinery/pkg/types"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/image/setters"
)

// defaultMessageTemplate is Flux's commit message when
// spec.git.commit.messageTemplate is empty.
const defaultMessageTemplate = `Update from image update automation`

// TemplateData is what the commit message template is given, Flux's
// fields: .AutomationObject (printed namespace/name), .Changed (file →
// object → changes, with .Changed.Objects and .Changed.Changes) and
// .Values (spec.git.commit.messageTemplateValues).
type TemplateData struct {
	AutomationObject types.NamespacedName
	Changed          setters.Result
	Values           map[string]string
}

// removedFields are template fields Flux removed, with the error text that
// using one gives and the field to name in the message.
var removedFields = []struct{ field, pattern string }{
	{".Updated", "can't evaluate field Updated in type"},
	{".Changed.ImageResult", "can't evaluate field ImageResult in type"},
}

// commitMessage renders the automation's message template for result,
// with sprig's hermetic functions (no clock, no randomness, no
// environment), as Flux does.
func commitMessage(obj *imagev1.ImageUpdateAutomation, result setters.Result) (string, error) {
	commit := obj.Spec.GitSpec.Commit
	text := commit.MessageTemplate
	if text == "" {
		text = defaultMessageTemplate
	}
	t, err := template.New("commit message").Funcs(sprig.HermeticTxtFuncMap()).Parse(text)
	if err != nil {
		return "", failed(imagev1.GitOperationFailedReason,
			fmt.Errorf("failed to update source: unable to create commit message template from spec: %w", err))
	}
	data := TemplateData{
		AutomationObject: types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name},
		Changed:          result,
		Values:           commit.MessageTemplateValues,
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		for _, r := range removedFields {
			if strings.Contains(err.Error(), r.pattern) {
				return "", stalled(imagev1.RemovedTemplateFieldReason, "%s", removedFieldMessage(r.field))
			}
		}
		return "", failed(imagev1.GitOperationFailedReason, fmt.Errorf("failed to update source: failed to run template from spec: %w", err))
	}
	return b.String(), nil
}

// removedFieldMessage is Flux's error for a template using a removed field.
func removedFieldMessage(field string) string {
	const see = "See: https://fluxcd.io/flux/components/image/imageupdateautomations/#message-template"
	switch field {
	case ".Updated":
		return "template uses removed '.Updated' field. Please use '.Changed' instead. " + see
	default:
		return "template uses removed '.Changed.ImageResult' field. Please use '.Changed.FileChanges' or '.Changed.Objects' instead. " + see
	}
}
