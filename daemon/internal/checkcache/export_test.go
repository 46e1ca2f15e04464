package checkcache

// OpenAs is Open for an executable of this identity.
var OpenAs = open

// ExecutableIdentity is this executable's build ID.
var ExecutableIdentity = executableIdentity

// RecordName is the record's file name in the directory.
const RecordName = recordName
