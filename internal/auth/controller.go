package auth

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	"k8s.io/apimachinery/pkg/types"
)

// ControllerTokenFile is where the controller's own ServiceAccount token
// is mounted; its subject names the account a consumer asks a token for
// when it presents the controller's identity through the TokenRequest API
// (the generic kubeconfig provider, the Vault login). Flux reads the same
// file. Tests point it at a file of their own.
var ControllerTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// ControllerServiceAccount is the controller's own ServiceAccount, read
// from the subject (system:serviceaccount:NS:NAME) of its mounted token.
func ControllerServiceAccount() (types.NamespacedName, error) {
	b, err := os.ReadFile(ControllerTokenFile)
	if err != nil {
		return types.NamespacedName{}, fmt.Errorf("failed to read service account token file %s: %w", ControllerTokenFile, err)
	}
	tok, _, err := jwt.NewParser().ParseUnverified(strings.TrimSpace(string(b)), jwt.MapClaims{})
	if err != nil {
		return types.NamespacedName{}, errors.New("failed to parse the controller's service account token")
	}
	sub, _ := tok.Claims.GetSubject()
	parts := strings.Split(sub, ":")
	if len(parts) != 4 || parts[0] != "system" || parts[1] != "serviceaccount" {
		return types.NamespacedName{}, fmt.Errorf("invalid subject format in service account token: %s", sub)
	}
	return types.NamespacedName{Namespace: parts[2], Name: parts[3]}, nil
}

// Subject is id with the controller's identity replaced by its own
// ServiceAccount (ControllerServiceAccount): for a consumer that presents
// a ServiceAccount token either way.
func Subject(id Identity) (Identity, error) {
	if id.ObjectLevel() {
		return id, nil
	}
	sa, err := ControllerServiceAccount()
	if err != nil {
		return Identity{}, err
	}
	return Identity{ServiceAccount: &sa}, nil
}
