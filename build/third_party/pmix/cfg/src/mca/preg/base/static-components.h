/* src/mca/preg/base/static-components.h: the preg components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_preg_native_component;
const pmix_mca_base_component_t *pmix_mca_preg_base_static_components[] = {
    &pmix_mca_preg_native_component, NULL};
