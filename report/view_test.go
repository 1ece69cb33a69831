package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/crashsig/crashsig/catalog"
)

// Every status the catalog can give has a CSS class and a place in the order.
func TestEveryStatusStyled(t *testing.T) {
	for _, st := range []catalog.Status{catalog.StatusAffected, catalog.StatusFixedLater, catalog.StatusAffectedNoFix,
		catalog.StatusFixed, catalog.StatusLikelyFixed, catalog.StatusVersionUnknown, catalog.StatusNoKnownDefect} {
		assert.NotEmpty(t, statusClass[st], st)
		assert.Contains(t, statusOrder, st)
	}
}
