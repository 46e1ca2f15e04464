package artifact

// The parallel decoding steps, for the tests that hold them to their
// sequential counterparts.
var (
	UnmarshalCatalogue  = unmarshalCatalogue
	NewFiles            = newFiles
	OptionsUnresolved   = optionsUnresolved
	CatalogueFilesField = catalogueFilesField
	CataloguePlansField = cataloguePlansField
)

// CheckedHas reports whether c holds key.
func CheckedHas(c *Checked, key FileKey) bool { return c.has(digestKey(key)) }
