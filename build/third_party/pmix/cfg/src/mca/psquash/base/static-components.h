/* src/mca/psquash/base/static-components.h: the psquash components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_psquash_flex128_component;
extern const pmix_mca_base_component_t pmix_mca_psquash_native_component;
const pmix_mca_base_component_t *pmix_mca_psquash_base_static_components[] = {
    &pmix_mca_psquash_flex128_component, &pmix_mca_psquash_native_component, NULL};
