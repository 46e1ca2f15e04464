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
