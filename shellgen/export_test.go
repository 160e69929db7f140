package shellgen

// WrapperScript exposes wrapperScript, job.sh, to the tests.
var WrapperScript = wrapperScript
