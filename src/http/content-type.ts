/** Whether a Content-Type header names `multipart/form-data` (parameters and case ignored). */
export function isMultipartFormData(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'multipart/form-data';
}
